package policy_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/c5c3/reconciler-sdk/policy"
)

func TestValidate(t *testing.T) {
	type fieldErr struct{ field, detail string }
	tests := map[string]struct {
		rules   map[string]string
		fldPath *field.Path
		want    []fieldErr
	}{
		"realistic set is clean": {rules: benchRules(200)},
		"empty set is clean":     {rules: nil},
		"unbalanced parenthesis": {
			rules: map[string]string{"identity:get_user": "role:admin or (role:reader"},
			want:  []fieldErr{{"rules[identity:get_user]", "at byte 14: unbalanced parenthesis: '(' is never closed"}},
		},
		"dangling operator": {
			rules: map[string]string{"identity:get_user": "role:admin or"},
			want:  []fieldErr{{"rules[identity:get_user]", `at byte 11: dangling operator: "or" has no right operand`}},
		},
		"empty check": {
			rules: map[string]string{"identity:get_user": "role:"},
			want:  []fieldErr{{"rules[identity:get_user]", `at byte 0: empty check: "role:" has nothing after ':'`}},
		},
		"unknown rule references in position order": {
			rules: map[string]string{
				"admin_required":    "role:admin",
				"identity:get_user": "rule:admin_requirex or rule:admin_required or rule:owner",
			},
			want: []fieldErr{
				{"rules[identity:get_user]", `at byte 0: unknown rule reference: rule "admin_requirex" is not defined`},
				{"rules[identity:get_user]", `at byte 46: unknown rule reference: rule "owner" is not defined`},
			},
		},
		"errors sorted by rule": {
			rules: map[string]string{
				"z": "rule:missing",
				"a": "role:a and",
				"m": "@",
			},
			want: []fieldErr{
				{"rules[a]", `at byte 7: dangling operator: "and" has no right operand`},
				{"rules[z]", `at byte 0: unknown rule reference: rule "missing" is not defined`},
			},
		},
		"self reference": {
			rules: map[string]string{"a": "role:x or rule:a"},
			want:  []fieldErr{{"rules[a]", "at byte 10: rule reference cycle: a -> a"}},
		},
		"cycle reported once at the closing reference": {
			rules: map[string]string{
				"a": "rule:b",
				"b": "role:x and rule:c",
				"c": "rule:a or role:y",
				"d": "rule:a",
			},
			want: []fieldErr{{"rules[c]", "at byte 0: rule reference cycle: a -> b -> c -> a"}},
		},
		"cycle error after unknown reference in the same rule": {
			rules: map[string]string{"a": "rule:a or rule:nope"},
			want: []fieldErr{
				{"rules[a]", "at byte 0: rule reference cycle: a -> a"},
				{"rules[a]", `at byte 10: unknown rule reference: rule "nope" is not defined`},
			},
		},
		"two cycles through one rule are one group": {
			rules: map[string]string{"a": "rule:b or rule:c", "b": "rule:a", "c": "rule:a"},
			want:  []fieldErr{{"rules[b]", "at byte 0: rule reference cycle: a -> b -> a (3 rules reference each other in cycles)"}},
		},
		"separate groups are reported separately": {
			rules: map[string]string{"a": "rule:b", "b": "rule:a", "c": "rule:d", "d": "rule:c or rule:a"},
			want: []fieldErr{
				{"rules[b]", "at byte 0: rule reference cycle: a -> b -> a"},
				{"rules[d]", "at byte 0: rule reference cycle: c -> d -> c"},
			},
		},
		"a long cycle names its first four and last three rules": {
			rules: func() map[string]string {
				rules := map[string]string{}
				for i := range 10 {
					rules[fmt.Sprintf("r%d", i)] = fmt.Sprintf("rule:r%d", (i+1)%10)
				}
				return rules
			}(),
			want: []fieldErr{{"rules[r9]", "at byte 0: rule reference cycle: r0 -> r1 -> r2 -> r3 -> ... -> r7 -> r8 -> r9 -> r0 (a cycle of 10 rules)"}},
		},
		"a cycle of eight rules is named in full": {
			rules: func() map[string]string {
				rules := map[string]string{}
				for i := range 8 {
					rules[fmt.Sprintf("r%d", i)] = fmt.Sprintf("rule:r%d", (i+1)%8)
				}
				return rules
			}(),
			want: []fieldErr{{"rules[r7]", "at byte 0: rule reference cycle: r0 -> r1 -> r2 -> r3 -> r4 -> r5 -> r6 -> r7 -> r0"}},
		},
		"diamond is no cycle": {
			rules: map[string]string{"a": "rule:b or rule:c", "b": "rule:d", "c": "rule:d", "d": "@"},
		},
		"empty rule name": {
			rules: map[string]string{"": "@"},
			want:  []fieldErr{{"rules[]", "rule name must not be empty"}},
		},
		"caller's field path": {
			rules:   map[string]string{"identity:get_user": "role:a role:b"},
			fldPath: field.NewPath("spec", "policy", "overrides"),
			want:    []fieldErr{{"spec.policy.overrides[identity:get_user]", `at byte 7: missing operator: expected and or or before "role:b"`}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := maps.Clone(tc.rules)
			errs := policy.Validate(tc.rules, tc.fldPath)
			var got []fieldErr
			for _, e := range errs {
				if e.Type != field.ErrorTypeInvalid {
					t.Errorf("%s: type %s, want Invalid", e.Field, e.Type)
				}
				if e.BadValue != tc.rules[keyOf(e.Field)] {
					t.Errorf("%s: value %v, want the rule's expression %q", e.Field, e.BadValue, tc.rules[keyOf(e.Field)])
				}
				got = append(got, fieldErr{e.Field, e.Detail})
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("Validate() =\n%q\nwant\n%q", got, tc.want)
			}
			if !maps.Equal(tc.rules, before) {
				t.Error("Validate mutated its input")
			}
		})
	}
}

// keyOf returns the rule name of a field path ending in [name].
func keyOf(path string) string {
	open := -1
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '[' {
			open = i
			break
		}
	}
	return path[open+1 : len(path)-1]
}

func TestValidateMergedOverride(t *testing.T) {
	// An override referencing a base rule is wrong on its own and right once merged.
	override := map[string]string{"identity:get_user": "rule:admin_required or user_id:%(target.user.id)s"}
	if errs := policy.Validate(override, nil); len(errs) != 1 {
		t.Fatalf("override alone: %v, want one unknown-rule error", errs)
	}
	if errs := policy.Validate(policy.Merge(identityBase, override), nil); len(errs) != 0 {
		t.Errorf("merged: %v", errs)
	}
}

// TestValidateSummarisesBeyondMaxErrors: the first MaxErrors problems in order, then
// one summary counting them all.
func TestValidateSummarisesBeyondMaxErrors(t *testing.T) {
	var refs []string
	for i := range policy.MaxErrors + 7 {
		refs = append(refs, fmt.Sprintf("rule:m%03d", i))
	}
	rules := map[string]string{"a": "role:a and", "b": strings.Join(refs, " or ")}
	errs := policy.Validate(rules, field.NewPath("spec", "policy"))
	if len(errs) != policy.MaxErrors+1 {
		t.Fatalf("%d errors, want %d", len(errs), policy.MaxErrors+1)
	}
	if got := errs[0].Field; got != "spec.policy[a]" {
		t.Errorf("first error on %s, want the first rule's", got)
	}
	for i, e := range errs[1:policy.MaxErrors] {
		want := fmt.Sprintf(`unknown rule reference: rule "m%03d" is not defined`, i)
		if e.Field != "spec.policy[b]" || !strings.HasSuffix(e.Detail, want) {
			t.Errorf("error %d = %v, want %s", i+1, e, want)
		}
	}
	summary := errs[policy.MaxErrors]
	wantDetail := fmt.Sprintf("8 more problems are not listed; Validate lists the first %d", policy.MaxErrors)
	if summary.Type != field.ErrorTypeTooMany || summary.Field != "spec.policy" ||
		summary.BadValue != policy.MaxErrors+8 || summary.Detail != wantDetail {
		t.Errorf("summary = %#v, want TooMany on spec.policy counting %d, %q", summary, policy.MaxErrors+8, wantDetail)
	}

	exactly := map[string]string{"b": strings.Join(refs[:policy.MaxErrors], " or ")}
	if errs := policy.Validate(exactly, nil); len(errs) != policy.MaxErrors || errs[len(errs)-1].Type != field.ErrorTypeInvalid {
		t.Errorf("exactly MaxErrors problems: %d errors, last %v; want them all and no summary", len(errs), errs[len(errs)-1])
	}
}

// TestValidateQuotesExcerpts: long names, tokens and expressions are cut to MaxExcerpt
// bytes around the problem, at UTF-8 boundaries, and marked with "…".
func TestValidateQuotesExcerpts(t *testing.T) {
	long := strings.Repeat("ä", 200) // 400 bytes of two-byte runes
	tests := map[string]struct {
		rules            map[string]string
		field            string
		value, detail    string
		valueHas, detHas string
	}{
		"long expression, problem at the end": {
			rules:  map[string]string{"a": strings.Repeat("role:a or ", 50) + "rule:missing"},
			field:  "rules[a]",
			value:  "…" + (strings.Repeat("role:a or ", 50) + "rule:missing")[512-100:],
			detail: `at byte 500: unknown rule reference: rule "missing" is not defined`,
		},
		"long expression, problem in the middle": {
			rules:  map[string]string{"a": strings.Repeat("role:a or ", 30) + "rule:missing" + strings.Repeat(" or role:a", 30)},
			field:  "rules[a]",
			value:  "…" + (strings.Repeat("role:a or ", 30) + "rule:missing" + strings.Repeat(" or role:a", 30))[300-25:300+75] + "…",
			detail: `at byte 300: unknown rule reference: rule "missing" is not defined`,
		},
		"long expression, problem at the start": {
			rules:  map[string]string{"a": "rule:missing" + strings.Repeat(" or role:a", 50)},
			field:  "rules[a]",
			value:  ("rule:missing" + strings.Repeat(" or role:a", 50))[:100] + "…",
			detail: `at byte 0: unknown rule reference: rule "missing" is not defined`,
		},
		"long token without ':'": {
			rules:  map[string]string{"a": long},
			field:  "rules[a]",
			value:  long[:100] + "…",
			detail: `at byte 0: malformed check: "` + long[:100] + `…" has no ':'`,
		},
		"long rule name and reference": {
			rules: map[string]string{long: "rule:" + long},
			field: "rules[" + long[:100] + "…]",
			value: ("rule:" + long)[:99] + "…",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			errs := policy.Validate(tc.rules, nil)
			if len(errs) != 1 {
				t.Fatalf("errors = %v, want one", errs)
			}
			e := errs[0]
			if e.Field != tc.field {
				t.Errorf("field = %q, want %q", e.Field, tc.field)
			}
			if e.BadValue != tc.value {
				t.Errorf("value = %q, want %q", e.BadValue, tc.value)
			}
			if !strings.HasPrefix(e.Detail, tc.detail) {
				t.Errorf("detail = %q, want prefix %q", e.Detail, tc.detail)
			}
			for _, s := range []string{e.Field, e.BadValue.(string), e.Detail} {
				if !utf8.ValidString(s) {
					t.Errorf("%q is cut inside a rune", s)
				}
			}
			if n := len(e.BadValue.(string)); n > policy.MaxExcerpt+2*len("…") {
				t.Errorf("value is %d bytes, want at most MaxExcerpt and two ellipses", n)
			}
		})
	}
}
