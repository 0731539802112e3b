package conformance

import (
	"errors"

	"k8s.io/apimachinery/pkg/types"
)

// checkTwoReplicas is [CheckTwoReplicas]: two instances converge to one set of children,
// without flapping conditions.
func (w *world) checkTwoReplicas() error {
	a, err := w.start("a", nil)
	if err != nil {
		return err
	}
	b, err := w.start("b", nil)
	if err != nil {
		return err
	}
	if err := w.createSamples(); err != nil {
		return err
	}
	if err := w.converge(nil); err != nil {
		return err
	}
	before, err := w.children(true)
	if err != nil {
		return err
	}
	var errs []error
	for _, cr := range w.crs {
		errs = append(errs, w.stable(cr, []*replica{a, b}))
	}
	after, err := w.children(true)
	if err != nil {
		return err
	}
	uids := map[types.UID]bool{}
	for _, c := range before {
		uids[c.obj.UID] = true
	}
	for _, c := range after {
		if !uids[c.obj.UID] {
			errs = append(errs, w.violation(c.String(), "metadata.name",
				"derive every child's name and content from the CR alone, so that two instances write the same object",
				"appeared while the two instances took turns: they do not agree on one set of children"))
		}
	}
	now := map[types.UID]bool{}
	for _, c := range after {
		now[c.obj.UID] = true
	}
	for _, c := range before {
		if !now[c.obj.UID] {
			errs = append(errs, w.violation(c.String(), "",
				"derive every child from the CR alone and never delete one the other instance wrote",
				"deleted or replaced while the two instances took turns"))
		}
	}
	return errors.Join(errs...)
}
