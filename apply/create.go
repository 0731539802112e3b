package apply

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CreateSuffix ends the name of the field manager EnsureObject creates objects under
// ([CreateFieldManager]), as kubectl create writes under "kubectl-create".
const CreateSuffix = "-create"

// maxFieldManagerLength is the longest field-manager name the API server accepts.
const maxFieldManagerLength = 128

// errNoCreateManager: fieldManager is too long to make CreateFieldManager's name, so
// the object is created by the apply itself.
var errNoCreateManager = errors.New("no create field manager")

// CreateFieldManager is the name under which EnsureObject creates an object that does
// not exist yet ("Creating" in the package documentation): fieldManager followed by
// [CreateSuffix]. Its Update entry in managedFields lasts until EnsureObject next
// applies to the object, which turns it into fieldManager's Apply entry first.
func CreateFieldManager(fieldManager string) string { return fieldManager + CreateSuffix }

// createManager returns CreateFieldManager(fieldManager), or false when that name is
// longer than the API server accepts.
func createManager(fieldManager string) (string, bool) {
	name := CreateFieldManager(fieldManager)
	return name, len(name) <= maxFieldManagerLength
}

// createNew creates obj (a copy without the server-owned metadata it may carry) under
// CreateFieldManager(fieldManager) and decodes the server's answer into obj. On an
// existing object the API server answers AlreadyExists and changes nothing, and obj is
// left as it was. errNoCreateManager: nothing was sent.
func createNew(ctx context.Context, c client.Client, obj client.Object, fieldManager string) error {
	manager, ok := createManager(fieldManager)
	if !ok {
		return errNoCreateManager
	}
	if !hasServerMetadata(obj) {
		// A freshly built object: the create decodes the answer into obj itself, and an
		// error leaves obj as it was.
		return c.Create(ctx, obj, client.FieldOwner(manager))
	}
	created, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("%T copies into a type that is no client.Object", obj)
	}
	clearServerMetadata(created)
	if err := c.Create(ctx, created, client.FieldOwner(manager)); err != nil {
		return err
	}
	return copyInto(created, obj)
}

// hasServerMetadata reports whether obj carries one of the metadata fields the server
// sets ([serverMetadata]): it was read from the server, or filled by a previous call.
func hasServerMetadata(obj metav1.Object) bool {
	for _, f := range serverMetadata {
		if f.set(obj) {
			return true
		}
	}
	return false
}

// clearServerMetadata empties the metadata fields the server sets ([serverMetadata]).
func clearServerMetadata(obj metav1.Object) {
	for _, f := range serverMetadata {
		f.clear(obj)
	}
}

// WrittenBy reports whether the managedFields entry mf records writes of fieldManager:
// one under its own name (any operation), or the Update entry of EnsureObject's create
// under [CreateFieldManager](fieldManager), which the first apply to the object turns
// into fieldManager's Apply entry ("Creating" in the package documentation).
func WrittenBy(mf metav1.ManagedFieldsEntry, fieldManager string) bool {
	if mf.Manager == fieldManager {
		return true
	}
	manager, ok := createManager(fieldManager)
	return ok && mf.Manager == manager && mf.Operation == metav1.ManagedFieldsOperationUpdate
}

// CreatedEntry returns the Update entry of EnsureObject's create under
// [CreateFieldManager](fieldManager) on obj (not of a subresource), if the first apply
// has not taken it over yet. It holds every field the create set, the API server's
// defaults included.
func CreatedEntry(obj metav1.Object, fieldManager string) (metav1.ManagedFieldsEntry, bool) {
	manager, ok := createManager(fieldManager)
	if !ok {
		return metav1.ManagedFieldsEntry{}, false
	}
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager == manager && mf.Operation == metav1.ManagedFieldsOperationUpdate && mf.Subresource == "" {
			return mf, true
		}
	}
	return metav1.ManagedFieldsEntry{}, false
}

// upgradeCreated turns the Update entry CreateFieldManager(fieldManager) holds on
// existing into fieldManager's Apply entry (merged into it when there is one), with a
// JSON patch of managedFields conditioned on existing's resourceVersion, so that the
// apply that follows removes the fields the desired object no longer sets. Without
// such an entry it sends nothing. On Conflict (existing was stale) existing is read
// again, through the Applier's APIReader when there is one, and the Conflict returned
// for the caller's retry. On success existing holds the server's answer.
func upgradeCreated(ctx context.Context, c client.Client, existing client.Object, fieldManager string) error {
	if _, ok := CreatedEntry(existing, fieldManager); !ok {
		return nil
	}
	manager, _ := createManager(fieldManager)
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(existing, sets.New(manager), fieldManager)
	if err != nil {
		return fmt.Errorf("take over the create's managedFields entry: %w", err)
	}
	if patch == nil {
		return nil
	}
	err = c.Patch(ctx, existing, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(fieldManager))
	if apierrors.IsConflict(err) {
		var reader client.Reader = c
		if a := ApplierOf(c); a != nil && a.opts.APIReader != nil {
			reader = a.opts.APIReader
		}
		if rerr := reader.Get(ctx, client.ObjectKeyFromObject(existing), existing); rerr != nil {
			return fmt.Errorf("read again after a conflict: %w", rerr)
		}
	}
	if err != nil {
		return fmt.Errorf("take over the create's managedFields entry: %w", err)
	}
	return nil
}
