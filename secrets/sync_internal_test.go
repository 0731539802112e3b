package secrets

import "testing"

func TestDigestAll(t *testing.T) {
	cases := map[string]struct {
		reason string
		a, b   []string
		same   bool
	}{
		"OneValueIsDigest": {
			reason: "One value digests as Digest does, so a single-value annotation keeps its value.",
			a:      []string{"value"}, b: nil, same: true,
		},
		"Order": {
			reason: "The values are digested in order.",
			a:      []string{"a", "b"}, b: []string{"b", "a"},
		},
		"Boundaries": {
			reason: "Each value is length-prefixed: moving a boundary changes the digest.",
			a:      []string{"ab", "c"}, b: []string{"a", "bc"},
		},
		"Equal": {
			reason: "The same values give the same digest.",
			a:      []string{"a", "b"}, b: []string{"a", "b"}, same: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := digestAll(tc.a)
			other := Digest(tc.a[0])
			if tc.b != nil {
				other = digestAll(tc.b)
			}
			if len(got) != 16 || (got == other) != tc.same {
				t.Errorf("%s\ndigestAll(%q) = %s, other %s, want same=%v", tc.reason, tc.a, got, other, tc.same)
			}
		})
	}
}
