package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/config"
)

// FuzzRenderINI checks that whatever RenderINI accepts, oslo.config parses back to the
// same data (options without values and empty sections left out), that [DEFAULT]
// comes first, that rendering is deterministic, and that names able to inject a
// section or an option are always refused.
func FuzzRenderINI(f *testing.F) {
	f.Add("DEFAULT", "debug", "true", "false", "identity_authtoken", "auth_url", "http://identity:5000")
	f.Add("federation", "trusted_dashboard", "https://a/auth", "https://b/auth", "DEFAULT", "x", "")
	f.Add("s", "k", "line one\nline two", " padded ", "t", "k", `"quoted"`)
	f.Add("s", "k", "'", `"`, "s", "k2", "\nleading newline")
	f.Add("s]\n[DEFAULT", "admin", "x", "y", "t", "k", "v")
	f.Add("s", "k = v\n[x]\ny", "v", "v", "t", "k", "v")
	f.Add("s", "k", "a\n\nb", "c\r", "t", "#k", "v")
	f.Add("s", "k", "a\n b", "b\n", "t", "k:v", "v")
	f.Add("s", "k", "x\u00a0", "\u3000y", "t", "k", "a\n\u2028")
	f.Add("s", "k", "\x1cx\x1d", "\x85", "t", "k", "a\nb\x1f")
	f.Add("", "k", "v", "v", "t", "", "v")
	f.Fuzz(func(t *testing.T, s1, k1, v1, v2, s2, k2, v3 string) {
		in := config.Sections{}
		add := func(section, key, value string) {
			if in[section] == nil {
				in[section] = map[string][]string{}
			}
			in[section][key] = append(in[section][key], value)
		}
		add(s1, k1, v1)
		add(s1, k1, v2)
		add(s2, k2, v3)

		out, err := config.RenderINI(in)
		injecting := strings.ContainsAny(s1+s2, "\n[]=") || strings.ContainsAny(k1+k2, "\n[]=")
		if err != nil {
			if !errors.Is(err, config.ErrInvalidName) && !errors.Is(err, config.ErrUnrepresentableValue) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			if out != "" {
				t.Fatalf("output %q returned with error %v", out, err)
			}
			return
		}
		if injecting {
			t.Fatalf("names %q %q %q %q accepted:\n%s", s1, k1, s2, k2, out)
		}
		back, perr := parseOslo(out)
		if perr != nil {
			t.Fatalf("oslo.config cannot parse the output: %v\n%s", perr, out)
		}
		if diff := cmp.Diff(normalize(in), back); diff != "" {
			t.Fatalf("round trip (-rendered +parsed back):\n%s\noutput:\n%q", diff, out)
		}
		if _, ok := in[config.DefaultSection]; ok && !strings.HasPrefix(out, "[DEFAULT]\n") {
			t.Fatalf("[DEFAULT] is not first:\n%s", out)
		}
		again, err := config.RenderINI(in)
		if err != nil || again != out {
			t.Fatalf("second render differs: %q, %v", again, err)
		}
	})
}
