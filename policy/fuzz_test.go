package policy_test

import (
	"errors"
	"maps"
	"testing"

	"github.com/c5c3/reconciler-sdk/policy"
)

// FuzzParse: Parse never panics; an error is always a *SyntaxError inside the text;
// whatever Parse accepts renders to canonical text that parses to an Equal tree and
// renders to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"@",
		"!",
		"role:admin",
		"role:admin or (role:reader and system_scope:all)",
		"rule:admin_required or project_id:%(target.project.id)s",
		"user_id:%(target.user.id)s",
		"(role:admin and system_scope:all) or (role:admin and token.domain.id:%(target.domain.id)s)",
		"(rule:system_reader) or (role:reader and domain_id:%(target.user.domain_id)s) or project_id:%(target.user.default_project_id)s",
		"not role:guest AND (rule:project_reader Or rule:system_reader)",
		"True:%(enabled)s and rule:admin_or_token_subject",
		"'member':%(role.name)s",
		"is_admin:True or 42:%(count)s",
		"http://policy.example/check",
		"(role:a)or(role:b)",
		"role:a and (role:b and role:c)",
		"not not (not role:a)",
		"role:admin or (role:reader",
		"role:admin)",
		"role:admin or",
		"'True'",
		"True",
		"role:",
		"()",
		" \t ",
		"project_id:%(project_id",
		"role:a\u00a0or\x1frole:b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := policy.Parse(s)
		if err != nil {
			var se *policy.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %T is not a *SyntaxError", s, err)
			}
			if se.Offset < 0 || (se.Offset >= len(s) && se.Offset != 0) {
				t.Fatalf("Parse(%q) offset %d outside the text", s, se.Offset)
			}
			return
		}
		canon := e.String()
		again, err := policy.Parse(canon)
		if err != nil {
			t.Fatalf("Parse(%q) = %q, which does not parse: %v", s, canon, err)
		}
		if !policy.Equal(e, again) {
			t.Fatalf("Parse(%q) = %s; its canonical %q parses to %s", s, dump(e), canon, dump(again))
		}
		if again.String() != canon {
			t.Fatalf("canonical text is not stable: %q -> %q", canon, again.String())
		}
	})
}

// FuzzRender: whatever Render accepts parses back, as YAML, to the same rules.
func FuzzRender(f *testing.F) {
	f.Add("identity:get_user", "role:admin or user_id:%(target.user.id)s", "admin_required", "")
	f.Add("a\"b", "x\ny\u2028\u0085\ufeff", "'", "#")
	f.Add("? key", ": value", "- item", "{}")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		rules := map[string]string{k1: v1, k2: v2}
		doc, err := policy.Render(rules)
		if err != nil {
			if !errors.Is(err, policy.ErrInvalidRule) {
				t.Fatalf("Render error %v does not match ErrInvalidRule", err)
			}
			return
		}
		if back := reload(t, doc); !maps.Equal(back, rules) {
			t.Fatalf("Render(%q) = %q parses back to %q", rules, doc, back)
		}
	})
}
