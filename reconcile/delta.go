package reconcile

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// statusDelta is what one pass changed in an object's status: the conditions it set or
// changed (in their final form), the condition types it removed, and the other
// top-level status fields it set or removed.
type statusDelta struct {
	set     []metav1.Condition
	removed []string
	fields  map[string]any
	dropped []string
}

// newStatusDelta compares the pass's snapshot with its result. bs and as are their
// unstructured statuses; skip (the aggregate condition, re-derived anyway) is left out.
func newStatusDelta[T Object](before, after T, bs, as any, skip string) statusDelta {
	var d statusDelta
	bc, ac := *before.Conditions(), *after.Conditions()
	for _, c := range ac {
		if c.Type == skip {
			continue
		}
		if old := meta.FindStatusCondition(bc, c.Type); old == nil || !sameCondition(*old, c) {
			d.set = append(d.set, c)
		}
	}
	for _, c := range bc {
		if c.Type != skip && meta.FindStatusCondition(ac, c.Type) == nil {
			d.removed = append(d.removed, c.Type)
		}
	}
	bm, _ := bs.(map[string]any)
	am, _ := as.(map[string]any)
	for k, v := range am {
		if k != "conditions" && !equality.Semantic.DeepEqual(bm[k], v) {
			if d.fields == nil {
				d.fields = map[string]any{}
			}
			d.fields[k] = v
		}
	}
	for k := range bm {
		if _, ok := am[k]; !ok && k != "conditions" {
			d.dropped = append(d.dropped, k)
		}
	}
	return d
}

func sameCondition(a, b metav1.Condition) bool {
	return a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message &&
		a.ObservedGeneration == b.ObservedGeneration && a.LastTransitionTime.Equal(&b.LastTransitionTime)
}

// applyDelta reapplies d to fresh and returns the result: fresh itself, or a new object
// when top-level status fields had to be set through the unstructured form.
func applyDelta[T Object](d statusDelta, fresh T) (T, error) {
	conds := fresh.Conditions()
	for _, c := range d.set {
		meta.SetStatusCondition(conds, c)
	}
	for _, t := range d.removed {
		meta.RemoveStatusCondition(conds, t)
	}
	if len(d.fields) == 0 && len(d.dropped) == 0 {
		return fresh, nil
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(fresh)
	if err != nil {
		return fresh, fmt.Errorf("convert %T to unstructured: %w", fresh, err)
	}
	status, _ := u["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		u["status"] = status
	}
	for k, v := range d.fields {
		status[k] = runtime.DeepCopyJSONValue(v)
	}
	for _, k := range d.dropped {
		delete(status, k)
	}
	out := newObject(fresh)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, out); err != nil {
		return fresh, fmt.Errorf("convert unstructured back to %T: %w", fresh, err)
	}
	return out, nil
}
