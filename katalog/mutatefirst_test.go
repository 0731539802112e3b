package katalog

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const mutateFirstKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: mutatefirst}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      validation:
        rules:
          - {field: spec.image, operator: exists, action: deny}
      mutation:
        mutateFirst: %t
        rules:
          - {field: spec.image, default: nginx}
`

// TestMutateFirst: with mutateFirst the defaults are applied before the validation rules
// see the custom resource, so a default satisfies a deny rule; without it the rules see
// the custom resource as written, and a denied one gets no defaults.
func TestMutateFirst(t *testing.T) {
	for _, tc := range []struct {
		mutateFirst bool
		reason      string
		image       string
	}{
		{mutateFirst: true, reason: ReasonReconciled, image: "nginx"},
		{mutateFirst: false, reason: ReasonValidationFailed, image: ""},
	} {
		t.Run(fmt.Sprintf("mutateFirst=%t", tc.mutateFirst), func(t *testing.T) {
			e := passEngine(env.Client, mustParse(t, "mutatefirst.yaml", fmt.Sprintf(mutateFirstKatalog, tc.mutateFirst)))
			g := newObject("Gadget", env.Namespace(t), "g", map[string]any{})
			create(t, g)
			fresh, c, err := passOnce(t, e, "gadget", g)
			if err != nil {
				t.Fatalf("pass: %v", err)
			}
			image, _, _ := unstructured.NestedString(fresh.Object, "spec", "image")
			if c.Reason != tc.reason || image != tc.image {
				t.Errorf("Ready %s/%s, spec.image %q; want reason %s, spec.image %q", c.Status, c.Reason, image, tc.reason, tc.image)
			}
			if tc.reason == ReasonReconciled && c.Status != metav1.ConditionTrue {
				t.Errorf("Ready %s, want True", c.Status)
			}
		})
	}
}
