package reconcile

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// MergeStatus merges the status changes of one pass into the status stored now, three
// ways, as [RunPass] does after a 409 Conflict on its status write. Each argument is the
// unstructured form of an object's status (the map under "status"; nil for none), its
// conditions the list of metav1.Condition under "conditions": before is the status the
// pass read, after the status it leaves and stored the status read again after the
// conflict.
//
// The changes of the pass are each condition type it set, changed or removed, except
// skip (an aggregate condition the caller derives again from the merged conditions, as
// RunPass does with Ready; "" skips none), and each other top-level status field it
// set, changed or removed. A change is applied where stored still holds what the pass
// read (conditions compared by type, status, reason, message and observedGeneration);
// where stored already holds what the pass set, nothing is to do. Anywhere else another
// writer changed the value after the pass read it: stored's value stays and the change
// is returned in kept, named "condition <Type>" or "field status.<name>" (conditions in
// the order after and before list them, then fields by name), as a decision made from
// data that is no longer current. Conditions and fields the pass left alone keep
// stored's values. A condition whose status the merge does not flip keeps stored's
// lastTransitionTime; a new or flipped one takes the pass's, or now when it has none.
//
// merged is a new map; before, after and stored are not modified (merged shares the
// values the pass left alone with stored). A conditions entry that is not a list of
// conditions is an error naming it, in before or after always and in stored when the
// pass changed a condition (stored's list is read only then); merged is then nil.
func MergeStatus(before, after, stored map[string]any, skip string) (merged map[string]any, kept []string, err error) {
	d, err := newStatusDelta(before, after, skip)
	if err != nil {
		return nil, nil, err
	}
	return d.merge(stored)
}

// LogKept logs, at V(1) on the logger of ctx, each change of kept (as [MergeStatus]
// returned them) that was not written because another writer changed the value after
// the pass read the object: the stored value stays and the pass is to run again. It
// reports whether kept names any change, that is whether the pass's status was
// superseded in part.
func LogKept(ctx context.Context, kept []string) bool {
	logger := log.FromContext(ctx)
	for _, what := range kept {
		logger.V(1).Info("this pass's change not written: another writer changed it after this pass read the object; "+
			"the stored value stays and the pass runs again", "change", what)
	}
	return len(kept) > 0
}

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

// newStatusDelta compares the unstructured status bs the pass read with as, the one it
// left; skip (the aggregate condition, re-derived anyway) is left out.
func newStatusDelta(bs, as map[string]any, skip string) (statusDelta, error) {
	var d statusDelta
	bc, err := decodeConditions(bs, "the status read")
	if err != nil {
		return d, err
	}
	ac, err := decodeConditions(as, "the status written")
	if err != nil {
		return d, err
	}
	for i := range ac {
		c := &ac[i]
		if c.Type == skip {
			continue
		}
		if old := findCondition(bc, c.Type); old == nil || !sameCondition(*old, *c) {
			d.conditions = append(d.conditions, conditionChange{typ: c.Type, read: old, set: c})
		}
	}
	for i := range bc {
		c := &bc[i]
		if c.Type != skip && findCondition(ac, c.Type) == nil {
			d.conditions = append(d.conditions, conditionChange{typ: c.Type, read: c})
		}
	}
	for k, v := range as {
		if k == "conditions" {
			continue
		}
		if old, ok := bs[k]; !ok || !equality.Semantic.DeepEqual(old, v) {
			d.fields = append(d.fields, fieldChange{name: k, read: old, hasRead: ok, set: v, hasSet: true})
		}
	}
	for k, old := range bs {
		if _, ok := as[k]; !ok && k != "conditions" {
			d.fields = append(d.fields, fieldChange{name: k, read: old, hasRead: true})
		}
	}
	slices.SortFunc(d.fields, func(a, b fieldChange) int { return cmp.Compare(a.name, b.name) })
	return d, nil
}

// decodeConditions decodes status.conditions of the unstructured status st (what names
// st in errors); a status without the entry has none.
func decodeConditions(st map[string]any, what string) ([]metav1.Condition, error) {
	raw, ok := st["conditions"]
	if !ok || raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("status.conditions of %s is a %T, not a list", what, raw)
	}
	out := make([]metav1.Condition, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("status.conditions[%d] of %s is a %T, not a condition", i, what, item)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &out[i]); err != nil {
			return nil, fmt.Errorf("status.conditions[%d] of %s: %w", i, what, err)
		}
	}
	return out, nil
}

// findCondition returns the condition of type typ in conds, nil when there is none.
func findCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	if i := slices.IndexFunc(conds, func(c metav1.Condition) bool { return c.Type == typ }); i >= 0 {
		return &conds[i]
	}
	return nil
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

// merge merges d into a copy of the unstructured status stored three ways (see
// MergeStatus) and returns it with the changes it kept out. The entries of stored's
// condition list that the merge does not change are kept as they are.
func (d statusDelta) merge(stored map[string]any) (map[string]any, []string, error) {
	out := maps.Clone(stored)
	if out == nil {
		out = map[string]any{}
	}
	var kept []string
	if len(d.conditions) > 0 {
		conds, err := decodeConditions(stored, "the stored status")
		if err != nil {
			return nil, nil, err
		}
		list, _ := stored["conditions"].([]any)
		list = slices.Clone(list)
		changed := false
		for _, ch := range d.conditions {
			i := slices.IndexFunc(conds, func(c metav1.Condition) bool { return c.Type == ch.typ })
			var cur *metav1.Condition
			if i >= 0 {
				cur = &conds[i]
			}
			switch {
			case sameDecision(cur, ch.set):
				continue
			case !sameDecision(cur, ch.read):
				kept = append(kept, "condition "+ch.typ)
				continue
			case ch.set == nil:
				conds, list = slices.Delete(conds, i, i+1), slices.Delete(list, i, i+1)
				changed = true
				continue
			}
			c := *ch.set
			switch {
			case cur != nil && cur.Status == c.Status:
				c.LastTransitionTime = cur.LastTransitionTime
			case c.LastTransitionTime.IsZero():
				c.LastTransitionTime = metav1.Now()
			}
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c)
			if err != nil {
				return nil, nil, fmt.Errorf("condition %s: %w", c.Type, err)
			}
			if i >= 0 {
				conds[i], list[i] = c, m
			} else {
				conds, list = append(conds, c), append(list, m)
			}
			changed = true
		}
		switch {
		case !changed:
		case len(list) == 0:
			delete(out, "conditions")
		default:
			out["conditions"] = list
		}
	}
	for _, ch := range d.fields {
		cur, has := stored[ch.name]
		switch {
		case sameField(cur, has, ch.set, ch.hasSet):
		case !sameField(cur, has, ch.read, ch.hasRead):
			kept = append(kept, "field status."+ch.name)
		case !ch.hasSet:
			delete(out, ch.name)
		default:
			out[ch.name] = runtime.DeepCopyJSONValue(ch.set)
		}
	}
	return out, kept, nil
}
