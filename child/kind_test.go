package child

import "testing"

func TestPlural(t *testing.T) {
	cases := map[string]struct {
		reason string
		kind   string
		want   string
	}{
		"s":           {reason: "most kinds take an s", kind: "VerticalPodAutoscaler", want: "VerticalPodAutoscalers"},
		"consonant y": {reason: "a y after a consonant becomes ies", kind: "NetworkPolicy", want: "NetworkPolicies"},
		"vowel y":     {reason: "a y after a vowel takes an s", kind: "Gateway", want: "Gateways"},
		"sibilant":    {reason: "s, x, ch and sh take es", kind: "Ingress", want: "Ingresses"},
		"empty":       {reason: "no kind, no plural", kind: "", want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := plural(tc.kind); got != tc.want {
				t.Errorf("%s: plural(%q) = %q, want %q", tc.reason, tc.kind, got, tc.want)
			}
		})
	}
}
