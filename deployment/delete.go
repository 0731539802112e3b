package deployment

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// deleteControlled deletes the object at key when owner controls it. It reports
// foreign=true when the object exists but is not controlled by owner: such an object
// is someone else's and is left alone. A missing object is no error. The delete is
// preconditioned on the UID that was read, so an object re-created in between by
// someone else is never removed.
func deleteControlled(ctx context.Context, c client.Client, owner client.Object, obj client.Object, key client.ObjectKey) (foreign bool, err error) {
	if err := c.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("get: %w", err)
	}
	if !metav1.IsControlledBy(obj, owner) {
		return true, nil
	}
	if obj.GetDeletionTimestamp() != nil {
		return false, nil
	}
	return false, deleteObject(ctx, c, obj)
}

// deleteObject deletes obj with background propagation, preconditioned on its UID; a
// missing object is no error.
func deleteObject(ctx context.Context, c client.Client, obj client.Object) error {
	err := c.Delete(ctx, obj,
		client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: new(obj.GetUID())})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete: %w", err)
	}
	return nil
}
