package conformance

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A CR has converged when kstatus reads it as Current and its Ready condition is True
// for the current generation; otherwise the reason names what kstatus said.
func TestReady(t *testing.T) {
	cond := func(typ, status string, observed int64) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": "Because", "message": typ + " says " + status,
			"observedGeneration": observed, "lastTransitionTime": "2026-01-01T00:00:00Z"}
	}
	cr := func(generation int64, observed any, deleting bool, conds ...map[string]any) *unstructured.Unstructured {
		md := map[string]any{"name": "first", "namespace": "ns", "generation": generation}
		if deleting {
			md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
			md["finalizers"] = []any{"example.com/keep"}
		}
		st := map[string]any{}
		if observed != nil {
			st["observedGeneration"] = observed
		}
		if conds != nil {
			list := make([]any, len(conds))
			for i, c := range conds {
				list[i] = c
			}
			st["conditions"] = list
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Toy",
			"metadata": md, "status": st}}
	}
	for _, tc := range []struct {
		name string
		cr   *unstructured.Unstructured
		ok   bool
		// why is what the reason must contain when not ok.
		why []string
	}{
		{name: "Current and Ready", cr: cr(2, int64(2), false, cond("Ready", "True", 2)), ok: true},
		{name: "Current and Ready without status.observedGeneration", cr: cr(2, nil, false, cond("Ready", "True", 2)), ok: true},
		{name: "Current, Ready and a Reconciling condition False",
			cr: cr(2, int64(2), false, cond("Ready", "True", 2), cond("Reconciling", "False", 2), cond("Stalled", "False", 2)), ok: true},
		{name: "InProgress: generation ahead of status.observedGeneration", cr: cr(3, int64(2), false, cond("Ready", "True", 3)),
			why: []string{"kstatus says InProgress", "Toy generation is 3, but latest observed generation is 2"}},
		{name: "InProgress: Reconciling True", cr: cr(2, int64(2), false, cond("Ready", "True", 2), cond("Reconciling", "True", 2)),
			why: []string{"kstatus says InProgress", "Reconciling says True"}},
		{name: "InProgress: Ready False", cr: cr(2, int64(2), false, cond("Ready", "False", 2)),
			why: []string{"kstatus says InProgress", "Ready says False"}},
		{name: "InProgress: Ready Unknown", cr: cr(2, int64(2), false, cond("Ready", "Unknown", 2)),
			why: []string{"kstatus says InProgress", "Ready says Unknown"}},
		{name: "Failed: Stalled True", cr: cr(2, int64(2), false, cond("Ready", "True", 2), cond("Stalled", "True", 2)),
			why: []string{"kstatus says Failed", "Stalled says True"}},
		{name: "Terminating", cr: cr(2, int64(2), true, cond("Ready", "True", 2)),
			why: []string{"kstatus says Terminating", "Resource scheduled for deletion"}},
		{name: "Current before any Ready condition", cr: cr(1, nil, false),
			why: []string{"kstatus says Current", "no Ready condition that is True"}},
		{name: "Current with Ready for an older generation", cr: cr(3, nil, false, cond("Ready", "True", 2)),
			why: []string{"kstatus says Current", "Ready is True for observedGeneration 2, metadata.generation is 3"}},
		{name: "unreadable status", cr: func() *unstructured.Unstructured {
			u := cr(1, nil, false)
			u.Object["status"] = map[string]any{"conditions": "Ready"}
			return u
		}(), why: []string{"kstatus cannot read it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := ready(tc.cr)
			if ok != tc.ok {
				t.Fatalf("ready = %v (%q), want %v", ok, why, tc.ok)
			}
			for _, w := range tc.why {
				if !strings.Contains(why, w) {
					t.Errorf("reason %q does not contain %q", why, w)
				}
			}
			if ok && why != "" {
				t.Errorf("ready with a reason: %q", why)
			}
		})
	}
}
