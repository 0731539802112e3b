package testenv

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// HoldFinalizer is the finalizer [Env.CreateBeingDeleted] puts on an object so that
// the object stays in deletion (deletionTimestamp set) until the test releases it. No
// controller knows it, so nothing but [Env.ReleaseFinalizers] removes it.
const HoldFinalizer = "test.c5c3.io/hold"

// CreateBeingDeleted adds [HoldFinalizer] to obj, creates it, and starts its deletion
// as [Env.DeleteHeld] does: obj is re-read, so that it is the server's copy with a
// deletionTimestamp, and returned. Its finalizers are released when the test ends.
func (e *Env) CreateBeingDeleted(t testing.TB, obj client.Object) client.Object {
	t.Helper()
	controllerutil.AddFinalizer(obj, HoldFinalizer)
	if err := e.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("testenv: create %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
	}
	return e.DeleteHeld(t, obj)
}

// DeleteHeld deletes obj, which exists on the server and carries a finalizer that
// holds it (such as [HoldFinalizer]), re-reads obj into itself and returns it: the
// server's copy, with a deletionTimestamp. When the test ends its finalizers are
// released ([Env.ReleaseFinalizers]), so that the object goes.
//
// The deletion uses background propagation: the default of some kinds (orphan, for a
// Job) adds a finalizer of its own that the garbage collector removes, a write the
// test did not ask for.
func (e *Env) DeleteHeld(t testing.TB, obj client.Object) client.Object {
	t.Helper()
	ctx := context.Background()
	release := obj.DeepCopyObject().(client.Object)
	t.Cleanup(func() { e.ReleaseFinalizers(t, release) })
	if err := e.Client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatalf("testenv: delete %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
	}
	if err := e.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatalf("testenv: read %T %s being deleted: %v", obj, client.ObjectKeyFromObject(obj), err)
	}
	return obj
}

// ReleaseFinalizers removes every finalizer of the object at obj's key, retrying when
// something wrote it in between, so that an object being deleted goes. An object that
// is already gone is no error. obj itself is left as it is; only its type and key are
// used.
func (e *Env) ReleaseFinalizers(t testing.TB, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	key := client.ObjectKeyFromObject(obj)
	cur := obj.DeepCopyObject().(client.Object)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.Client.Get(ctx, key, cur); err != nil {
			return err
		}
		cur.SetFinalizers(nil)
		return e.Client.Update(ctx, cur)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("testenv: release the finalizers of %T %s: %v", obj, key, err)
	}
}
