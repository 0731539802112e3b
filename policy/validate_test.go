package policy_test

import (
	"fmt"
	"maps"
	"testing"

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
	if errs := policy.Validate(policy.Merge(keystoneBase, override), nil); len(errs) != 0 {
		t.Errorf("merged: %v", errs)
	}
}
