package katalog

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
			ctx := context.Background()
			ns := env.Namespace(t)
			opts := testOptions()
			opts.Recorder = events.NewFakeRecorder(100)
			e := passEngineWith(env.Client, mustParse(t, "mutatefirst.yaml", fmt.Sprintf(mutateFirstKatalog, tc.mutateFirst)), opts)
			g := newObject("Gadget", ns, "g", map[string]any{})
			create(t, g)
			if _, err := e.recs["gadget"].Reconcile(ctx, reconcileRequest(g)); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			fresh := g.DeepCopy()
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(g), fresh); err != nil {
				t.Fatal(err)
			}
			c, err := readyCondition(ctx, fresh)
			if err != nil {
				t.Fatal(err)
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
