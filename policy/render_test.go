package policy_test

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/c5c3/reconciler-sdk/policy"
)

// reload parses rendered policy.yaml the way LoadPolicyFromConfigMap does.
func reload(t testing.TB, doc string) map[string]string {
	t.Helper()
	got := map[string]string{}
	if err := yaml.UnmarshalStrict([]byte(doc), &got); err != nil {
		t.Fatalf("rendered YAML does not parse: %v\n%s", err, doc)
	}
	return got
}

func TestRender(t *testing.T) {
	tests := map[string]struct {
		rules map[string]string
		want  string
	}{
		"nil":   {nil, ""},
		"empty": {map[string]string{}, ""},
		"sorted and quoted": {
			map[string]string{
				"identity:get_user": "rule:admin_or_owner",
				"admin_required":    "role:admin or is_admin:1",
				"admin_or_owner":    "rule:admin_required or user_id:%(target.user.id)s",
				"default":           "",
			},
			`"admin_or_owner": "rule:admin_required or user_id:%(target.user.id)s"` + "\n" +
				`"admin_required": "role:admin or is_admin:1"` + "\n" +
				`"default": ""` + "\n" +
				`"identity:get_user": "rule:admin_or_owner"` + "\n",
		},
		"escapes": {
			map[string]string{"a\"b\\c": "x\ny\tz\r\x00\x7f\u0085\u00a0\u2028\u2029\ufeff\u00e9"},
			`"a\"b\\c": "x\ny\tz\r\u0000\u007F\N\_\L\P\uFEFFé"` + "\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := policy.Render(tc.rules)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Render() =\n%s\nwant\n%s", got, tc.want)
			}
			if got == "" {
				return
			}
			if back := reload(t, got); !maps.Equal(back, tc.rules) {
				t.Errorf("round trip = %q, want %q", back, tc.rules)
			}
		})
	}
}

func TestRenderLongName(t *testing.T) {
	long := strings.Repeat("n", 3000)
	rules := map[string]string{long: "role:admin", "short": "@"}
	got, err := policy.Render(rules)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, `? "`+long+`"`+"\n: \"role:admin\"\n") {
		t.Errorf("a name longer than YAML's implicit-key limit is not written as an explicit key:\n%.80s...", got)
	}
	if back := reload(t, got); !maps.Equal(back, rules) {
		t.Error("long rule name does not survive the round trip")
	}
}

func TestRenderDeterministic(t *testing.T) {
	rules := benchRules(200)
	want, err := policy.Render(rules)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		// A fresh map has a fresh iteration order.
		got, err := policy.Render(maps.Clone(rules))
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatal("Render output depends on map iteration order")
		}
	}
}

func TestRenderInvalidUTF8(t *testing.T) {
	tests := map[string]struct {
		rules map[string]string
		want  string
	}{
		"name":       {map[string]string{"bad\xffname": "@"}, `rule name "bad\xffname" is not valid UTF-8`},
		"expression": {map[string]string{"identity:get_user": "role:\xfe"}, `rule "identity:get_user": expression "role:\xfe" is not valid UTF-8`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := policy.Render(tc.rules)
			if !errors.Is(err, policy.ErrInvalidRule) {
				t.Fatalf("Render() error = %v, want ErrInvalidRule", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Render() error = %q, want it to contain %q", err, tc.want)
			}
		})
	}
}
