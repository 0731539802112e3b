package apply

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// FieldManager is the stable Server-Side Apply field-manager name shared by all Ensure*
// helpers of the SDK.
const FieldManager = "cobaltcore-operator"

// Sentinel errors returned (wrapped) by EnsureObject for input it refuses before any
// API call. Test for them with errors.Is.
var (
	// ErrNilObject reports a nil object to apply.
	ErrNilObject = errors.New("object to apply is nil")
	// ErrNilOwner reports a nil owner.
	ErrNilOwner = errors.New("owner is nil")
	// ErrOwnerNotPersisted reports an owner without a UID, i.e. one that was never read
	// from or written to the API server.
	ErrOwnerNotPersisted = errors.New("owner has no UID")
	// ErrInvalidOwner reports an owner that cannot control the object: a namespaced
	// owner of a cluster-scoped object, an owner in another namespace, or an owner
	// whose kind the scheme does not know.
	ErrInvalidOwner = errors.New("invalid owner")
	// ErrUnknownKind reports an object whose Go type the scheme does not know.
	ErrUnknownKind = errors.New("kind not registered in scheme")
	// ErrMissingName reports an object without metadata.name.
	ErrMissingName = errors.New("object has no name")
	// ErrMissingFieldManager reports an empty field-manager name.
	ErrMissingFieldManager = errors.New("field manager is empty")
	// ErrNilScheme reports a nil *runtime.Scheme.
	ErrNilScheme = errors.New("scheme is nil")
)

// CheckScheme returns an error wrapping ErrNilScheme when scheme is nil. Every helper
// that takes a *runtime.Scheme calls it before using the scheme, so a nil scheme is an
// error, never a panic.
func CheckScheme(scheme *runtime.Scheme) error {
	if scheme == nil {
		return ErrNilScheme
	}
	return nil
}

// EnsureObject creates or updates obj by Server-Side Apply under fieldManager
// (ForceOwnership, retried on conflict), with owner as its owner on every call
// ([SetOwnership]) and the zero values and server-owned fields stripped ("What the field
// manager owns"), and decodes the server's answer into obj. An existing object owner does
// not control, or one being deleted, is refused and left untouched ("Ownership").
// Through an [Applier] with its skip on, a missing object is created by a plain create
// instead, and the first apply to it takes the create's managedFields entry over
// ("Creating"). Bad input is refused before any API call with the package's sentinels;
// API errors are wrapped with the object's kind and namespace/name (apierrors helpers
// still see them).
func EnsureObject[T client.Object](
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	obj T,
	fieldManager string,
) error {
	if isNil(obj) {
		return fmt.Errorf("apply %T: %w", obj, ErrNilObject)
	}
	if err := CheckScheme(scheme); err != nil {
		return fmt.Errorf("apply %T %s: %w", obj, objectKey(obj), err)
	}
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return fmt.Errorf("apply %T %s: %w: %w", obj, objectKey(obj), ErrUnknownKind, err)
	}
	desc := describe(gvk, obj)
	if fieldManager == "" {
		return fmt.Errorf("apply %s: %w", desc, ErrMissingFieldManager)
	}
	if err := Validate(owner, obj); err != nil {
		return fmt.Errorf("apply %s: %w", desc, err)
	}
	if err := SetOwnership(c, scheme, owner, obj); err != nil {
		return fmt.Errorf("apply %s: %w", desc, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)

	fieldManager = fieldManagerFor(c, fieldManager)
	applier := ApplierOf(c)
	key := skipKey{gvk: gvk, namespace: obj.GetNamespace(), name: obj.GetName()}
	skipping := applier != nil && !applier.opts.DisableSkip && !skipDisabled(ctx)
	createOnly := skipping && applier.createsUnconfirmed(obj, key)
	lookupCtx := ctx
	if createOnly {
		lookupCtx = withUnconfirmed(ctx)
	}
	existing, err := checkExisting(lookupCtx, c, owner, obj, gvk, fieldManager)
	if err != nil {
		return checkError(desc, err)
	}

	if applier != nil {
		applier.label(obj, owner.GetUID())
	}
	var desired [32]byte
	if skipping {
		if desired, err = digestDesired(obj, fieldManager); err != nil {
			return fmt.Errorf("apply %s: digest: %w", desc, err)
		}
	}

	if existing == nil && skipping {
		// Nothing there as far as the lookup knows: a plain create, which fails with
		// AlreadyExists and changes nothing when an object is there after all (a
		// label-filtered cache's unconfirmed miss, an informer behind the API server).
		// Only through an Applier's skip: its converged passes send nothing, so the
		// create's entry is taken over at the first real change, not at the next pass.
		err := createNew(ctx, c, obj, fieldManager)
		switch {
		case err == nil:
			obj.GetObjectKind().SetGroupVersionKind(gvk)
			Record(ctx, Write{Action: ActionCreated, GVK: gvk, Key: client.ObjectKeyFromObject(obj)})
			rememberTyped(applier.state, key, obj, desired, fieldManager)
			return nil
		case errors.Is(err, errNoCreateManager) && !createOnly:
			// The apply below creates it.
		case errors.Is(err, errNoCreateManager), apierrors.IsAlreadyExists(err):
			if existing, err = checkExisting(ctx, c, owner, obj, gvk, fieldManager); err != nil {
				return checkError(desc, err)
			}
		default:
			return fmt.Errorf("apply %s: %w", desc, err)
		}
	}

	if skipping && existing != nil && applier.state.converged(key, existing, desired, fieldManager) {
		if err := copyInto(existing, obj); err != nil {
			return fmt.Errorf("apply %s: read cached object: %w", desc, err)
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		Record(ctx, Write{Action: ActionSkipped, GVK: gvk, Key: client.ObjectKeyFromObject(obj)})
		return nil
	}

	body, err := desiredUnstructured(obj)
	if err != nil {
		return fmt.Errorf("apply %s: convert to unstructured: %w", desc, err)
	}
	body.SetGroupVersionKind(gvk)
	u := body
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		// Apply decodes the response into its argument: work on a copy so that a retry
		// sends the same desired body again.
		if existing != nil {
			if err := upgradeCreated(ctx, c, existing, fieldManager); err != nil {
				return err
			}
		}
		applied := body.DeepCopy()
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied),
			client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
			return err
		}
		u = applied
		return nil
	})
	if err != nil {
		if skipping {
			applier.state.forget(key)
		}
		return fmt.Errorf("apply %s: %w", desc, err)
	}
	return finishApply(ctx, applier, skipping, key, gvk, body, existing, u, desired, fieldManager, obj, desc)
}

// checkError wraps an error of checkExisting for EnsureObject; a *NotControlledError
// names the object itself and is returned as it is.
func checkError(desc string, err error) error {
	if errors.Is(err, ErrNotControlled) {
		return err
	}
	return fmt.Errorf("apply %s: %w", desc, err)
}

// finishApply records the server's answer u to the apply of body (existing is what was
// there before, nil when nothing was), decodes it into obj and remembers it for the skip.
func finishApply(ctx context.Context, applier *Applier, skipping bool, key skipKey, gvk schema.GroupVersionKind,
	body *unstructured.Unstructured, existing client.Object, u *unstructured.Unstructured,
	desired [sha256.Size]byte, fieldManager string, obj client.Object, desc string,
) error {
	Record(ctx, applyWrite(gvk, body, existing, u))
	if err := decodeInto(u, obj); err != nil {
		if skipping {
			applier.state.forget(key)
		}
		return fmt.Errorf("apply %s: decode response: %w", desc, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	if skipping {
		if _, isUnstructured := any(obj).(runtime.Unstructured); isUnstructured {
			applier.state.remember(key, u, desired, fieldManager)
		} else {
			rememberTyped(applier.state, key, obj, desired, fieldManager)
		}
	}
	return nil
}

// rememberTyped is skipState.remember for a typed object: it records, for the skip, the
// server's answer to an apply of the desired body as decoded into obj, the caller's
// typed object. Reading managedFields off the typed object costs nothing, off the
// answer as unstructured a conversion of every entry; the Apply entry's bytes are the
// same either way (both come through the unstructured converter). Without an Apply
// entry nothing is remembered and the next EnsureObject applies.
func rememberTyped(s *skipState, k skipKey, obj metav1.Object, desired [sha256.Size]byte, fieldManager string) {
	managed, ok := digestManaged(obj, fieldManager)
	if !ok {
		s.forget(k)
		return
	}
	s.put(k, skipEntry{uid: obj.GetUID(), desired: desired, managed: managed})
}

// Validate refuses, before any API call, the input EnsureObject refuses without a
// scheme: a nil object, an object without metadata.name, a nil owner and an owner that
// was never persisted (no UID). Helpers that read or write before they call
// EnsureObject (a pre-apply Get, a Create) call it first, so bad input is refused the
// same way everywhere. The errors wrap the package's sentinels.
func Validate(owner, obj client.Object) error {
	switch {
	case isNil(obj):
		return ErrNilObject
	case obj.GetName() == "":
		return fmt.Errorf("%w: metadata.name is empty", ErrMissingName)
	}
	return ValidateOwner(owner)
}

// ValidateOwner is the owner half of Validate, for helpers that check a set of
// children (or none) against one owner: it refuses a nil owner and one that was never
// persisted (no UID).
func ValidateOwner(owner client.Object) error {
	switch {
	case isNil(owner):
		return ErrNilOwner
	case owner.GetUID() == "":
		return fmt.Errorf("%w: owner %s must be read from the API server first",
			ErrOwnerNotPersisted, objectKey(owner))
	}
	return nil
}

// describe names an object in errors as "Kind namespace/name" (or "Kind name" when
// cluster-scoped).
func describe(gvk schema.GroupVersionKind, obj client.Object) string {
	return gvk.Kind + " " + objectKey(obj)
}

func objectKey(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

// isNil reports whether v is nil or a typed nil pointer inside an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// decodeInto stores the server's response u into obj, replacing its previous content.
func decodeInto(u *unstructured.Unstructured, obj client.Object) error {
	if out, ok := any(obj).(*unstructured.Unstructured); ok {
		out.Object = u.Object
		return nil
	}
	if out, ok := any(obj).(runtime.Unstructured); ok {
		out.SetUnstructuredContent(u.Object)
		return nil
	}
	rv := reflect.ValueOf(obj).Elem()
	fresh := reflect.New(rv.Type())
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, fresh.Interface()); err != nil {
		return err
	}
	rv.Set(fresh.Elem())
	return nil
}
