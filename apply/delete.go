package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DeleteControlled deletes the child at key that owner no longer wants (read into obj, an
// empty object of its kind) when owner controls it ([IsControlled]), with background
// propagation and preconditioned on the UID it read: the counterpart of EnsureObject for
// optional children. Someone else's object is left alone and reported as foreign=true; a
// missing object, one being deleted and a kind the cluster does not serve are no error.
func DeleteControlled(ctx context.Context, c client.Client, owner, obj client.Object, key client.ObjectKey) (foreign bool, err error) {
	if isNil(obj) {
		return false, fmt.Errorf("delete %s: %w", key, ErrNilObject)
	}
	if isNil(owner) {
		return false, fmt.Errorf("delete %s %s: %w", kindName(c, obj), key, ErrNilOwner)
	}
	if err := c.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return false, nil
		}
		return false, fmt.Errorf("get %s %s: %w", kindName(c, obj), key, err)
	}
	if !IsControlled(c, owner, obj) {
		return true, nil
	}
	if obj.GetDeletionTimestamp() != nil {
		return false, nil
	}
	return false, DeleteObject(ctx, c, obj)
}

// DeleteObject deletes obj with background propagation; a missing object is no error.
// When obj carries a UID (it was read from the server) the delete is preconditioned on
// it, so an object re-created under the same name since is left alone; an object built
// in code, without a UID, is deleted by name.
func DeleteObject(ctx context.Context, c client.Client, obj client.Object) error {
	if isNil(obj) {
		return fmt.Errorf("delete: %w", ErrNilObject)
	}
	opts := []client.DeleteOption{client.PropagationPolicy(metav1.DeletePropagationBackground)}
	if uid := obj.GetUID(); uid != "" {
		opts = append(opts, client.Preconditions{UID: &uid})
	}
	err := c.Delete(ctx, obj, opts...)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("delete %s %s: %w", kindName(c, obj), objectKey(obj), err)
	}
	gvk, _ := c.GroupVersionKindFor(obj)
	Record(ctx, Write{Action: ActionDeleted, GVK: gvk, Key: client.ObjectKeyFromObject(obj)})
	return nil
}

// kindName names obj's kind for errors: from the client's scheme, else its Go type.
func kindName(c client.Client, obj client.Object) string {
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}
