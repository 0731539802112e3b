package conformance

import (
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Each check has its own file, named after it (quiescence.go, errors.go, drift.go, ...);
// this file holds what several of them share.

// poll is the interval of the suite's waits.
const poll = 100 * time.Millisecond

// quietPasses is how many passes after the first quiet one must be quiet too.
const quietPasses = 3

// driftValue is the value the suite sets an operator-owned label to.
const driftValue = "conformance-drift"

// setLabel sets a label of c as another client would (a merge patch under the field
// manager "conformance-drift").
func (w *world) setLabel(c child, key, value string) error {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(c.kind.gvk)
	obj.SetNamespace(c.obj.Namespace)
	obj.SetName(c.obj.Name)
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, key, value)
	if err := w.c.Patch(w.ctx, obj, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(driftValue)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("conformance: set label %s of %s: %w", key, c, err)
	}
	return nil
}

// deleteChild deletes c as another client would.
func (w *world) deleteChild(c child) error {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(c.kind.gvk)
	obj.SetNamespace(c.obj.Namespace)
	obj.SetName(c.obj.Name)
	if err := w.c.Delete(w.ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); ignoreNotFound(err) != nil {
		return fmt.Errorf("conformance: delete %s: %w", c, err)
	}
	return nil
}

// getChild reads c's current metadata; nil when it does not exist.
func (w *world) getChild(c child) (*metav1.PartialObjectMetadata, error) {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(c.kind.gvk)
	err := w.c.Get(w.ctx, client.ObjectKey{Namespace: c.obj.Namespace, Name: c.obj.Name}, obj)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

// stable runs quietPasses passes of cr on each replica in turn and reports conditions
// that change between them.
func (w *world) stable(cr *unstructured.Unstructured, replicas []*replica) error {
	cur, err := w.read(cr)
	if err != nil {
		return err
	}
	want := conditionsKey(cur)
	for i := range quietPasses * len(replicas) {
		r := replicas[i%len(replicas)]
		w.pass(r, cr)
		cur, err := w.read(cr)
		if err != nil {
			return err
		}
		if got := conditionsKey(cur); !slices.Equal(got, want) {
			by := ""
			if len(replicas) > 1 {
				by = " of instance " + r.name
			}
			return w.violation(describe(cr), "status.conditions",
				"set conditions from the observed state alone, so that every pass (and every replica) computes the same ones; "+
					"no pass counters, times or instance names in reasons and messages",
				"conditions changed on converged pass %d%s:\nbefore:\n  %s\nafter:\n  %s", i+1, by,
				strings.Join(want, "\n  "), strings.Join(got, "\n  "))
		}
	}
	return nil
}

// conditionsKey renders the conditions as compared for flapping.
func conditionsKey(cr *unstructured.Unstructured) []string {
	conds, _ := conditionsOf(cr)
	out := make([]string, 0, len(conds))
	for _, c := range conds {
		out = append(out, fmt.Sprintf("%s=%s reason=%s message=%q since=%s", c.Type, c.Status, c.Reason, c.Message,
			c.LastTransitionTime.UTC().Format(time.RFC3339)))
	}
	slices.Sort(out)
	return out
}
