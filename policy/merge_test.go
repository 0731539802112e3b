package policy_test

import (
	"maps"
	"testing"

	"github.com/c5c3/reconciler-sdk/policy"
)

func TestMerge(t *testing.T) {
	tests := map[string]struct {
		base, override, want map[string]string
	}{
		"both nil":      {nil, nil, map[string]string{}},
		"base only":     {map[string]string{"a": "role:a"}, nil, map[string]string{"a": "role:a"}},
		"override only": {nil, map[string]string{"a": "role:a"}, map[string]string{"a": "role:a"}},
		"override wins per rule": {
			map[string]string{"identity:get_user": "rule:admin_required", "identity:list_users": "rule:admin_required"},
			map[string]string{"identity:get_user": "role:reader", "identity:create_user": "role:admin"},
			map[string]string{
				"identity:get_user":    "role:reader",
				"identity:list_users":  "rule:admin_required",
				"identity:create_user": "role:admin",
			},
		},
		"empty override allows": {
			map[string]string{"a": "role:admin"},
			map[string]string{"a": ""},
			map[string]string{"a": ""},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			baseBefore, overrideBefore := maps.Clone(tc.base), maps.Clone(tc.override)
			got := policy.Merge(tc.base, tc.override)
			if got == nil {
				t.Fatal("Merge returned nil")
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("Merge() = %v, want %v", got, tc.want)
			}
			if !maps.Equal(tc.base, baseBefore) || (tc.base == nil) != (baseBefore == nil) {
				t.Errorf("Merge mutated base: %v, was %v", tc.base, baseBefore)
			}
			if !maps.Equal(tc.override, overrideBefore) || (tc.override == nil) != (overrideBefore == nil) {
				t.Errorf("Merge mutated override: %v, was %v", tc.override, overrideBefore)
			}
			// The result shares nothing with the inputs.
			got["added-after-merge"] = "!"
			for k := range got {
				got[k] = "!"
			}
			if !maps.Equal(tc.base, baseBefore) || !maps.Equal(tc.override, overrideBefore) {
				t.Error("writing to the merged map changed an input")
			}
		})
	}
}
