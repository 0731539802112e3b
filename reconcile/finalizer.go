package reconcile

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/apply"
)

// AddFinalizer adds finalizer to obj on the API server, with a merge patch of
// metadata.finalizers guarded by obj's resourceVersion, and reports whether it wrote; an
// object that carries it already costs no request. Only obj's finalizers and
// resourceVersion are updated from the answer: the status the pass set in memory is kept.
func AddFinalizer(ctx context.Context, c client.Client, obj client.Object, finalizer string) (bool, error) {
	if controllerutil.ContainsFinalizer(obj, finalizer) {
		return false, nil
	}
	if err := patchFinalizers(ctx, c, obj, func(o client.Object) { controllerutil.AddFinalizer(o, finalizer) }); err != nil {
		return false, fmt.Errorf("add finalizer %q to %s: %w", finalizer, describe(c, obj), err)
	}
	return true, nil
}

// RemoveFinalizer removes finalizer from obj on the API server and reports whether it
// wrote. It is idempotent: an object without the finalizer costs no request, and an
// object that is already gone counts as done. Removing the last finalizer of an object
// being deleted lets the API server delete it; [RunPass] then skips the status write.
// The write is guarded and reported like [AddFinalizer]'s.
func RemoveFinalizer(ctx context.Context, c client.Client, obj client.Object, finalizer string) (bool, error) {
	if !controllerutil.ContainsFinalizer(obj, finalizer) {
		return false, nil
	}
	err := patchFinalizers(ctx, c, obj, func(o client.Object) { controllerutil.RemoveFinalizer(o, finalizer) })
	if apierrors.IsNotFound(err) {
		controllerutil.RemoveFinalizer(obj, finalizer)
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("remove finalizer %q from %s: %w", finalizer, describe(c, obj), err)
	}
	return true, nil
}

// patchFinalizers applies change to a copy of obj, patches it, and copies the new
// finalizers and resourceVersion back into obj.
func patchFinalizers(ctx context.Context, c client.Client, obj client.Object, change func(client.Object)) error {
	base, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("DeepCopyObject of %T is not a client.Object", obj)
	}
	patched := base.DeepCopyObject().(client.Object)
	change(patched)
	if err := c.Patch(ctx, patched, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	obj.SetFinalizers(patched.GetFinalizers())
	obj.SetResourceVersion(patched.GetResourceVersion())
	recordWrite(ctx, c, obj, "metadata.finalizers")
	return nil
}

// recordWrite reports a write that changed fields of obj, the custom resource, through
// apply.Record.
func recordWrite(ctx context.Context, c client.Client, obj client.Object, fields ...string) {
	gvk, _ := c.GroupVersionKindFor(obj)
	apply.Record(ctx, apply.Write{Action: apply.ActionConfigured, GVK: gvk,
		Key: client.ObjectKeyFromObject(obj), Fields: fields})
}

// describe names obj as "Kind namespace/name" for errors.
func describe(c client.Client, obj client.Object) string {
	return kindOf(c, obj) + " " + client.ObjectKeyFromObject(obj).String()
}
