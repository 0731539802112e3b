package katalog

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const statusFieldsKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: statusfields}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      operatorBox:
        status:
          fields:
            - {path: phase, value: Pending}
            - {path: phase, value: Sized, when: [{field: spec.size, greaterThan: "0"}]}
            - {path: phase, value: Large, when: [{field: spec.size, greaterThan: "5"}]}
            - {path: detail.size, value: "{{ .spec.size }}", when: [{field: spec.size, exists: true}]}
`

// TestStatusFieldsLastWriterWins: of the status fields whose conditions hold, the last one
// declared for a path wins; nested paths are written; the Ready condition carries the
// generation the pass saw.
func TestStatusFieldsLastWriterWins(t *testing.T) {
	e := passEngine(env.Client, mustParse(t, "statusfields.yaml", statusFieldsKatalog))
	g := newObject("Gadget", env.Namespace(t), "g", map[string]any{})
	create(t, g)

	for _, step := range []struct {
		size       int64 // 0: spec.size not set
		phase      string
		detailSize string
	}{
		{0, "Pending", ""},
		{3, "Sized", "3"},
		{9, "Large", "9"},
		{2, "Sized", "2"},
	} {
		if step.size != 0 {
			patchSpec(t, g, map[string]any{"size": step.size})
		}
		fresh, c, err := passOnce(t, e, "gadget", g)
		if err != nil {
			t.Fatalf("size %d: pass: %v", step.size, err)
		}
		phase, _, _ := unstructured.NestedString(fresh.Object, "status", "phase")
		detail, _, _ := unstructured.NestedString(fresh.Object, "status", "detail", "size")
		if phase != step.phase || detail != step.detailSize {
			t.Errorf("size %d: status.phase %q, status.detail.size %q; want %q, %q", step.size, phase, detail, step.phase, step.detailSize)
		}
		if c.Status != metav1.ConditionTrue || c.ObservedGeneration != fresh.GetGeneration() {
			t.Errorf("size %d: Ready %s observedGeneration %d, want True at generation %d", step.size, c.Status, c.ObservedGeneration, fresh.GetGeneration())
		}
	}
}
