package conformance

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// checkValidation is [CheckValidation]: every invalid sample is refused at admission
// with a message that names its field.
func (w *world) checkValidation() error {
	if len(w.opts.Invalid) == 0 {
		return w.violation("", "Options.Invalid",
			"list CRs that admission must refuse, each with the field the refusal names, or skip Validation with a reason",
			"no invalid sample to try")
	}
	if _, err := w.start("a", nil); err != nil { // its webhooks, if it serves any
		return err
	}
	var errs []error
	for _, s := range w.opts.Invalid {
		u, err := w.toUnstructured(s.Object)
		if err != nil {
			return err
		}
		err = w.c.Create(w.ctx, u)
		switch {
		case err == nil:
			_ = w.c.Delete(w.ctx, u)
			errs = append(errs, w.violation(describe(u), s.Field,
				"refuse it at admission: a +kubebuilder:validation marker on the field, an x-kubernetes-validations (CEL) rule, "+
					"or a validating webhook",
				"the invalid sample was accepted"))
		case !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) && !apierrors.IsBadRequest(err):
			return fmt.Errorf("conformance: create invalid sample %s: %w", describe(u), err)
		case !strings.Contains(err.Error(), s.Field):
			errs = append(errs, w.violation(describe(u), s.Field,
				"make the refusal name the field: CRD validation and CEL rules do (fieldPath on a rule at a parent); "+
					"a webhook should return field.ErrorList errors for it",
				"refused, but the message does not name %s: %v", s.Field, err))
		}
	}
	return errors.Join(errs...)
}
