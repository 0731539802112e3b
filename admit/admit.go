package admit

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

var (
	// ErrNotInScheme is wrapped by [Register] when the manager's scheme does not know
	// the object's type: add the API group's AddToScheme to the manager's scheme.
	ErrNotInScheme = errors.New("the manager's scheme does not know the type")
	// ErrNothingToRegister is returned by [Register] given neither a defaulter nor a
	// validator.
	ErrNothingToRegister = errors.New("neither a defaulter nor a validator")
)

// Register registers d as the mutating and v as the validating webhook of obj's kind
// on mgr's webhook server (ctrl.NewWebhookManagedBy). Either may be nil, not both
// ([ErrNothingToRegister]). The error names obj's Go type ("register the Widget
// admission webhooks: ...") and wraps the cause: [ErrNotInScheme] when mgr's scheme
// lacks the type.
func Register[T runtime.Object](mgr ctrl.Manager, obj T, d admission.Defaulter[T], v admission.Validator[T]) error {
	noun := "webhooks"
	if d == nil || v == nil {
		noun = "webhook"
	}
	wrap := func(err error) error {
		return fmt.Errorf("register the %s admission %s: %w", typeName(obj), noun, err)
	}
	if d == nil && v == nil {
		return wrap(ErrNothingToRegister)
	}
	if _, _, err := mgr.GetScheme().ObjectKinds(obj); err != nil {
		return wrap(fmt.Errorf("%w: %w", ErrNotInScheme, err))
	}
	b := ctrl.NewWebhookManagedBy(mgr, obj)
	if d != nil {
		b = b.WithDefaulter(d)
	}
	if v != nil {
		b = b.WithValidator(v)
	}
	if err := b.Complete(); err != nil {
		return wrap(err)
	}
	return nil
}

// typeName is the name of obj's type, without the pointer: Widget for a *Widget.
func typeName(obj any) string {
	t := reflect.TypeOf(obj)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "<nil>"
	}
	return t.Name()
}

// Invalid is the Invalid error (HTTP 422, apierrors.IsInvalid) of the object obj of
// kind gk, listing errs sorted by field path (a stable sort of a copy); nil when errs
// is empty.
func Invalid(gk schema.GroupKind, obj metav1.Object, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(gk, obj.GetName(), sortedByField(errs))
}

// sortedByField is a copy of errs in order of field path, equal paths in their order.
func sortedByField(errs field.ErrorList) field.ErrorList {
	out := append(field.ErrorList(nil), errs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

// NewProblems splits the problems of an updated object, newErrs, by those of the
// object it replaces, oldErrs: a problem oldErrs has too (the same field, type, value
// and detail: the same Error text) is kept, as a warning with that text; every other
// one is refused. Both keep newErrs' order.
func NewProblems(oldErrs, newErrs field.ErrorList) (kept admission.Warnings, refused field.ErrorList) {
	had := make(map[string]bool, len(oldErrs))
	for _, e := range oldErrs {
		had[e.Error()] = true
	}
	for _, e := range newErrs {
		if had[e.Error()] {
			kept = append(kept, e.Error())
			continue
		}
		refused = append(refused, e)
	}
	return kept, refused
}

// Namespace is obj's namespace or, when obj carries none (a namespaced object created
// without metadata.namespace), the namespace of the admission request in ctx; empty
// when neither names one.
func Namespace(ctx context.Context, obj metav1.Object) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns
	}
	if req, err := admission.RequestFromContext(ctx); err == nil {
		return req.Namespace
	}
	return ""
}

// Rules are the checks of one kind, T, that a [Validator] runs.
type Rules[T client.Object] interface {
	// GroupKind is the kind the Invalid error names.
	GroupKind() schema.GroupKind
	// Problems lists every problem of obj, in any order, under the package's rule that
	// messages never echo a value; an empty list admits obj.
	Problems(obj T) field.ErrorList
}

// Validator is the admission.Validator[T] of the rules R: create refuses every
// problem, update only the ones the old object did not have ([NewProblems]; the
// others are warnings), delete admits. Refusals are one [Invalid] error. Its zero value
// runs R's zero value, so an R without fields makes Validator{} ready to register.
type Validator[T client.Object, R Rules[T]] struct {
	// Rules lists the problems of an object of kind T.
	Rules R
}

// ValidateCreate refuses obj with an Invalid error listing all its problems.
func (v Validator[T, R]) ValidateCreate(_ context.Context, obj T) (admission.Warnings, error) {
	return nil, Invalid(v.Rules.GroupKind(), obj, v.Rules.Problems(obj))
}

// ValidateUpdate refuses newObj with an Invalid error listing the problems oldObj did
// not have; the ones it had are warnings, in order of field path.
func (v Validator[T, R]) ValidateUpdate(_ context.Context, oldObj, newObj T) (admission.Warnings, error) {
	kept, refused := NewProblems(v.Rules.Problems(oldObj), sortedByField(v.Rules.Problems(newObj)))
	return kept, Invalid(v.Rules.GroupKind(), newObj, refused)
}

// ValidateDelete admits every deletion: an object on its way out needs no valid fields.
func (Validator[T, R]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}
