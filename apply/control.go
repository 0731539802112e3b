package apply

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AdoptAnnotation lets an owner adopt an existing object without a controller when
// whoever manages the object sets it to "true" ("Ownership" in the package
// documentation); an object with another controller is never adopted, annotated or not.
const AdoptAnnotation = "cobaltcore.c5c3.io/adopt"

var (
	// ErrNotControlled reports an existing object that the owner does not control: it
	// has no controller (made by kubectl or Helm) or another one. Helpers never apply
	// over, delete or recreate such an object. The error is a *NotControlledError.
	ErrNotControlled = errors.New("existing object is not controlled by the owner")
	// ErrBeingDeleted reports an existing object that is being deleted: applying to it
	// would be lost with it, so the caller retries once it is gone.
	ErrBeingDeleted = errors.New("existing object is being deleted")
)

// NotControlledError is the error for an existing object that the owner does not
// control. errors.Is(err, ErrNotControlled) is true for it.
type NotControlledError struct {
	// Object names the existing object ("Kind namespace/name").
	Object string
	// Owner names the owner that wanted to control it ("Kind namespace/name").
	Owner string
	// Controller is the object's current controller reference, nil when it has none.
	Controller *metav1.OwnerReference
	// Claim is the object's claim on a target cluster (ClaimOf) when it carries one
	// for another owner or another management cluster, nil otherwise.
	Claim *Claim
	// Remote is true when the owner claims its children with labels (the client is an
	// Applier with ApplierOptions.Remote): an object without Claim and Controller is then
	// unclaimed rather than without a controller.
	Remote bool
	// PartialClaim is true when the object carries some of the claim labels, but no
	// complete claim that agrees with OwnerAnnotation: it is nobody's, and not adopted
	// while those labels are there.
	PartialClaim bool
}

// Error says who controls or claims the object and what the user can do about it.
func (e *NotControlledError) Error() string {
	switch {
	case e.Claim != nil:
		return fmt.Sprintf("%s is claimed by %s, not by %s", e.Object, e.Claim, e.Owner)
	case e.Controller != nil:
		return fmt.Sprintf("%s is controlled by %s %s (uid %s), not by %s", e.Object,
			e.Controller.Kind, e.Controller.Name, e.Controller.UID, e.Owner)
	case e.PartialClaim:
		return fmt.Sprintf("%s carries an incomplete owner claim (the labels %s, %s, %s, %s and the "+
			"annotation %s must all be present and agree); %s does not take it over: delete it, or remove "+
			"those labels and annotate it %s=true to let %s adopt it", e.Object,
			OwnerClusterLabel, OwnerKindLabel, OwnerNamespaceLabel, OwnerNameLabel, OwnerAnnotation,
			e.Owner, AdoptAnnotation, e.Owner)
	case e.Remote:
		return fmt.Sprintf("%s exists and is not claimed by any owner (it has no %s labels); %s does "+
			"not take it over: delete it, or annotate it %s=true to let %s adopt it", e.Object,
			"cobaltcore.c5c3.io/owner-*", e.Owner, AdoptAnnotation, e.Owner)
	}
	return fmt.Sprintf("%s exists and has no controller; %s does not take it over: delete it, "+
		"or annotate it %s=true to let %s adopt it", e.Object, e.Owner, AdoptAnnotation, e.Owner)
}

// Is makes errors.Is(err, ErrNotControlled) true.
func (e *NotControlledError) Is(target error) bool { return target == ErrNotControlled }

// CheckControlled returns nil when owner controls existing the way c's cluster records
// it (IsControlled: a controller reference, or on a target cluster a claim), and
// otherwise a *NotControlledError naming existing's controller or claim (or saying it
// has none). gvk names existing's kind in the error. Helpers call it before they
// delete, recreate or write over an object they read. It makes no API call.
func CheckControlled(c client.Client, owner, existing client.Object, gvk schema.GroupVersionKind) error {
	if IsControlled(c, owner, existing) {
		return nil
	}
	err := &NotControlledError{
		Object:     describe(gvk, existing),
		Owner:      describeOwner(owner),
		Controller: metav1.GetControllerOfNoCopy(existing),
		Remote:     remoteOf(c) != nil,
	}
	if !err.Remote {
		return err
	}
	if claim, ok := ClaimOf(existing); ok {
		err.Claim = &claim
	} else {
		err.PartialClaim = hasClaimLabel(existing)
	}
	return err
}

// checkExisting reads the object obj names and refuses to apply over it when it is
// being deleted, or when owner does not control it (CheckControlled), unless it is
// unclaimed (Unclaimed) and either carries AdoptAnnotation=true or, on the management
// cluster, was applied or created by fieldManager before. A missing object is no error (nil is
// returned): the apply creates it. Otherwise the existing object is returned.
//
// On a target cluster the "applied before" exception does not hold: the operators of
// two management clusters that share a target cluster write under the same field
// manager name, so an Apply entry of fieldManager does not tell which of them made the
// object.
func checkExisting(ctx context.Context, c client.Client, owner, obj client.Object, gvk schema.GroupVersionKind, fieldManager string) (client.Object, error) {
	existing := emptyLike(obj, gvk)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get existing: %w", err)
	}
	if existing.GetDeletionTimestamp() != nil {
		return nil, fmt.Errorf("%w: retry once it is gone", ErrBeingDeleted)
	}
	err := CheckControlled(c, owner, existing, gvk)
	if err == nil {
		return existing, nil
	}
	if !Unclaimed(c, existing) {
		return nil, err
	}
	// An object this operator applied or created before and that lost its controller reference
	// since (someone removed it) is ours: re-asserting the reference takes nothing else.
	_, created := CreatedEntry(existing, fieldManager)
	if existing.GetAnnotations()[AdoptAnnotation] == "true" ||
		(remoteOf(c) == nil && (AppliedBy(existing, fieldManager) || created)) {
		return existing, nil
	}
	return nil, err
}

// AppliedBy reports whether obj's managedFields hold an Apply entry of fieldManager:
// fieldManager has applied to obj before. An object applied with nothing but its name
// owns no field and has no such entry.
func AppliedBy(obj client.Object, fieldManager string) bool {
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager == fieldManager && mf.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}

// emptyLike returns an empty object of obj's Go type (an Unstructured of gvk for an
// unstructured obj) to read the existing object into.
func emptyLike(obj client.Object, gvk schema.GroupVersionKind) client.Object {
	if _, ok := any(obj).(*unstructured.Unstructured); ok {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u
	}
	return reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
}

// describeOwner names an owner as "Kind namespace/name", using the GVK it carries; a
// nil owner is "a caller without an owner".
func describeOwner(owner client.Object) string {
	if isNil(owner) {
		return "a caller without an owner"
	}
	kind := owner.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		kind = reflect.TypeOf(owner).Elem().Name()
	}
	return kind + " " + objectKey(owner)
}
