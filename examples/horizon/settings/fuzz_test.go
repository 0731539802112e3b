package settings_test

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/c5c3/reconciler-sdk/examples/horizon/settings"
)

var (
	identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// assignment is a top-level assignment line: a name at column 0, " = ", a value.
	assignment = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*) = (.+)$`)
)

// FuzzRender feeds arbitrary strings into every kind of field and checks, in pure Go,
// that Render never panics, is deterministic, refuses with ErrInvalidSettings and no
// output, and that an accepted input gives a file of only comment, import, assignment
// and indented or closing continuation lines, assigning exactly the expected names, in
// which every string field is one well-formed double-quoted literal.
func FuzzRender(f *testing.F) {
	f.Add("http://keystone:5000/v3", "UTC", "oidc", "OpenID Connect", "corp", "SESSION_TIMEOUT", "3600")
	f.Add("", "", "", "", "", "", "")
	f.Add(`"); import os #`, "\n", `\`, `"""`, "'''", "X", "1")
	f.Add(`"); import os #`, "\n", `\`, `"""`, "'''", "X = 1\nY", "1\nimport os")
	f.Add("k\r\nimport os", "\u2028", "\x00", "\ufeff\u202e", "a\"b", "DEBUG", "True")
	f.Add("k\r\nimport os", "\u2028", "\x00", "\ufeff\u202e", "a\"b", "DEBUG", "True; import os")
	f.Add(`k"`, `t\"`, `i"`, `"l`, `p\`, "TIME_ZONE", `  "UTC"  `)
	f.Add("k", "t", "credentials", "dup", "i", "A", `"""`)
	f.Add("k", "t", "i", "l", "p", "_", "{'a': [1, (2, b'\\x00')], 3: {4, 5}}")
	f.Add("k", "t", "i", "l", "p", "import", "__import__('os').system('id')")
	f.Add("k", "t", "i", "l", "p", "X", "1 + \\")
	f.Add("k\xff", "t\xc3", "i", "l", "p", "X", "'\xff'")
	f.Fuzz(func(t *testing.T, keystoneURL, timeZone, id, label, idp, extraKey, extraValue string) {
		in := settings.Settings{
			KeystoneURL:      keystoneURL,
			Image:            label,
			MemcachedServers: []string{idp + ":11211"},
			AllowedHosts:     []string{label, id},
			TimeZone:         timeZone,
			Gateway:          true,
			WebSSO: &settings.WebSSO{
				Enabled:       true,
				Choices:       []settings.Choice{{ID: "credentials", Label: label}, {ID: id, Label: label}},
				InitialChoice: id,
				IDPMapping:    map[string]settings.IDPMapping{id: {IDP: idp, Protocol: "openid"}},
				KeystoneURL:   keystoneURL,
			},
			MultiDomain: &settings.MultiDomain{
				Enabled:       true,
				DefaultDomain: label,
				Dropdown:      true,
				Domains:       []settings.DomainChoice{{ID: id, Label: label}},
			},
			ExtraConfig: map[string]string{extraKey: extraValue},
		}
		out, err := settings.Render(in)
		again, err2 := settings.Render(in)
		if !bytes.Equal(out, again) || (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("not deterministic: %v / %v", err, err2)
		}
		if err != nil {
			if !errors.Is(err, settings.ErrInvalidSettings) {
				t.Fatalf("error %v does not wrap ErrInvalidSettings", err)
			}
			if out != nil {
				t.Fatalf("output returned with error %v", err)
			}
			return
		}
		if keystoneURL == "" || id == "" || idp == "" || id == "credentials" {
			t.Fatalf("invalid input accepted: %q %q %q", keystoneURL, id, idp)
		}
		if !identifier.MatchString(extraKey) || strings.ContainsAny(extraValue, "\n\r\x00") || extraKey == "SECRET_KEY" {
			t.Fatalf("ExtraConfig %q = %q accepted", extraKey, extraValue)
		}
		if !utf8.Valid(out) || bytes.ContainsAny(out, "\r\x00") {
			t.Fatalf("output has invalid UTF-8, CR or NUL:\n%q", out)
		}

		var names, lines []string
		strs := 0
		for i, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			switch {
			case line == "", strings.HasPrefix(line, "# "), line == "import os",
				line == "}", line == ")", line == "]":
				continue
			case strings.HasPrefix(line, "    "):
				if strings.HasPrefix(line, "     ") && !strings.HasPrefix(line, "        ") {
					t.Fatalf("line %d is indented by neither 4 nor 8 spaces: %q", i+1, line)
				}
				continue
			}
			m := assignment.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("line %d is no comment, import, assignment or continuation: %q\n%s", i+1, line, out)
			}
			names = append(names, m[1])
			lines = append(lines, line)
		}
		want := []string{
			"DEBUG", "ALLOWED_HOSTS", "TIME_ZONE", "SECRET_KEY", "SESSION_ENGINE", "CACHES",
			"OPENSTACK_KEYSTONE_URL", "OPENSTACK_ENDPOINT_TYPE", "LOGGING", "COMPRESS_OFFLINE",
			"COMPRESS_ENABLED", "SECURE_PROXY_SSL_HEADER", "WEBSSO_ENABLED", "WEBSSO_CHOICES",
			"WEBSSO_INITIAL_CHOICE", "WEBSSO_IDP_MAPPING", "WEBSSO_KEYSTONE_URL",
			"WEBSSO_USE_HTTP_REFERER", "OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT",
			"OPENSTACK_KEYSTONE_DEFAULT_DOMAIN", "OPENSTACK_KEYSTONE_DOMAIN_DROPDOWN",
			"OPENSTACK_KEYSTONE_DOMAIN_CHOICES", extraKey,
		}
		if label == "" {
			want = without(want, "OPENSTACK_KEYSTONE_DEFAULT_DOMAIN")
		}
		if strings.Join(names, ",") != strings.Join(want, ",") {
			t.Fatalf("assigned names\n got %v\nwant %v\n%s", names, want, out)
		}
		// The last assignment is the ExtraConfig entry, as given; in the others, each
		// string field is exactly one string literal.
		if got, want := lines[len(lines)-1], extraKey+" = "+strings.Trim(extraValue, " \t"); got != want {
			t.Fatalf("last line %q, want %q", got, want)
		}
		for i, name := range names[:len(names)-1] {
			switch name {
			case "OPENSTACK_KEYSTONE_URL", "TIME_ZONE", "WEBSSO_INITIAL_CHOICE", "WEBSSO_KEYSTONE_URL",
				"OPENSTACK_KEYSTONE_DEFAULT_DOMAIN":
				value := strings.TrimPrefix(lines[i], name+" = ")
				if rest, ok := pyStringPrefix(value); !ok || rest != "" {
					t.Fatalf("value of %s is not one string literal: %q", name, value)
				}
				strs++
			}
		}
		if want := 5 - boolInt(label == ""); strs != want {
			t.Fatalf("%d string settings checked, want %d:\n%s", strs, want, out)
		}

		// The choice and domain lines are pairs of well-formed string literals.
		pairs := 0
		for _, line := range strings.Split(string(out), "\n") {
			if !strings.HasPrefix(line, "    (") {
				continue
			}
			rest, ok := pyStringPrefix(strings.TrimPrefix(line, "    ("))
			if ok {
				rest, ok = strings.CutPrefix(rest, ", ")
			}
			if ok {
				rest, ok = pyStringPrefix(rest)
			}
			if !ok || rest != ")," {
				t.Fatalf("pair line is not (str, str),: %q", line)
			}
			pairs++
		}
		if pairs != 3 {
			t.Fatalf("%d pair lines, want 3 (two choices, one domain)", pairs)
		}
	})
}

// pyStringPrefix consumes one double-quoted literal with backslash escapes, as Render
// writes them, from the start of s, and returns the rest.
func pyStringPrefix(s string) (rest string, ok bool) {
	if !strings.HasPrefix(s, `"`) {
		return s, false
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return s[i+1:], true
		}
	}
	return s, false
}

func without(list []string, drop string) []string {
	var out []string
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
