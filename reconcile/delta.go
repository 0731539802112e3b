package reconcile

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// statusDelta is what one pass changed in an object's status, with what it read: each
// condition type it set, changed or removed, and each other top-level status field it
// set, changed or removed (conditions in the order the pass's result and snapshot list
// them, fields by name).
type statusDelta struct {
	conditions []conditionChange
	fields     []fieldChange
}

// conditionChange is one condition type a pass changed: read is the condition as the
// pass read it and set as the pass left it (nil: absent, or removed).
type conditionChange struct {
	typ       string
	read, set *metav1.Condition
}

// fieldChange is one top-level status field a pass changed, in unstructured form: read
// is the value the pass read and set the value it left (hasRead, hasSet: whether the
// field was present).
type fieldChange struct {
	name            string
	read, set       any
	hasRead, hasSet bool
}

// newStatusDelta compares the pass's snapshot with its result. bs and as are their
// unstructured statuses; skip (the aggregate condition, re-derived anyway) is left out.
func newStatusDelta[T Object](before, after T, bs, as any, skip string) statusDelta {
	var d statusDelta
	bc, ac := *before.Conditions(), *after.Conditions()
	for i := range ac {
		c := &ac[i]
		if c.Type == skip {
			continue
		}
		if old := meta.FindStatusCondition(bc, c.Type); old == nil || !sameCondition(*old, *c) {
			d.conditions = append(d.conditions, conditionChange{typ: c.Type, read: old, set: c})
		}
	}
	for i := range bc {
		c := &bc[i]
		if c.Type != skip && meta.FindStatusCondition(ac, c.Type) == nil {
			d.conditions = append(d.conditions, conditionChange{typ: c.Type, read: c})
		}
	}
	bm, _ := bs.(map[string]any)
	am, _ := as.(map[string]any)
	for k, v := range am {
		if k == "conditions" {
			continue
		}
		if old, ok := bm[k]; !ok || !equality.Semantic.DeepEqual(old, v) {
			d.fields = append(d.fields, fieldChange{name: k, read: old, hasRead: ok, set: v, hasSet: true})
		}
	}
	for k, old := range bm {
		if _, ok := am[k]; !ok && k != "conditions" {
			d.fields = append(d.fields, fieldChange{name: k, read: old, hasRead: true})
		}
	}
	slices.SortFunc(d.fields, func(a, b fieldChange) int { return cmp.Compare(a.name, b.name) })
	return d
}

// sameCondition reports whether a and b are equal, lastTransitionTime included.
func sameCondition(a, b metav1.Condition) bool {
	return sameDecision(&a, &b) && a.LastTransitionTime.Equal(&b.LastTransitionTime)
}

// sameDecision reports whether a and b (nil: absent) state the same thing: both absent,
// or equal in type, status, reason, message and observedGeneration. lastTransitionTime
// is left out: it records when the status last flipped, not what a writer decided.
func sameDecision(a, b *metav1.Condition) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message &&
		a.ObservedGeneration == b.ObservedGeneration
}

// sameField reports whether two optional unstructured values are equal.
func sameField(a any, hasA bool, b any, hasB bool) bool {
	return hasA == hasB && (!hasA || equality.Semantic.DeepEqual(a, b))
}

// mergeDelta merges d into fresh three ways and returns the result (fresh itself, or a
// new object when top-level status fields had to be set through the unstructured form)
// and the changes it kept out, named "condition <Type>" or "field status.<name>".
//
// A change of the pass is applied where fresh still holds what the pass read. Where
// fresh already holds what the pass set, nothing is to do. Anywhere else another writer
// changed the value after this pass read it: fresh's value stays and the change is
// kept out, as a decision made from data that is no longer current. A condition whose
// status the merge does not flip keeps fresh's lastTransitionTime.
func mergeDelta[T Object](d statusDelta, fresh T) (T, []string, error) {
	var kept []string
	conds := fresh.Conditions()
	for _, ch := range d.conditions {
		cur := meta.FindStatusCondition(*conds, ch.typ)
		switch {
		case sameDecision(cur, ch.set):
		case !sameDecision(cur, ch.read):
			kept = append(kept, "condition "+ch.typ)
		case ch.set == nil:
			meta.RemoveStatusCondition(conds, ch.typ)
		default:
			meta.SetStatusCondition(conds, *ch.set)
		}
	}
	if len(d.fields) == 0 {
		return fresh, kept, nil
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(fresh)
	if err != nil {
		return fresh, nil, fmt.Errorf("convert %T to unstructured: %w", fresh, err)
	}
	status, _ := u["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		u["status"] = status
	}
	changed := false
	for _, ch := range d.fields {
		cur, has := status[ch.name]
		switch {
		case sameField(cur, has, ch.set, ch.hasSet):
		case !sameField(cur, has, ch.read, ch.hasRead):
			kept = append(kept, "field status."+ch.name)
		case !ch.hasSet:
			delete(status, ch.name)
			changed = true
		default:
			status[ch.name] = runtime.DeepCopyJSONValue(ch.set)
			changed = true
		}
	}
	if !changed {
		return fresh, kept, nil
	}
	out := newObject(fresh)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, out); err != nil {
		return fresh, nil, fmt.Errorf("convert unstructured back to %T: %w", fresh, err)
	}
	return out, kept, nil
}
