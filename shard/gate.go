package shard

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Gate wraps r so that, of all the replicas of a ring, only the one whose
// [Member.Active] ranges hold an object's UID reconciles it: the request's object is
// read through c (the manager's cache) into a fresh newObj(); an object outside the
// member's active ranges is left to its owner (an empty Result, no error), and the pass
// over an owned one runs under [Member.Admit]'s context and ends before the member
// hands its range over. A request whose object c does not hold is dropped (an empty
// Result, no error) without calling r: with server-side selectors that is an object of
// another member's slice, which r's own client might still read past the cache (an
// Applier with SelectedCache confirms a miss through the API server) and reconcile
// unadmitted; an object really gone needs no pass (one being deleted behind a finalizer
// is still there). A failed read is returned, wrapped, naming the object.
func Gate[T client.Object](m *Member, c client.Reader, newObj func() T, r reconcile.Reconciler) reconcile.Reconciler {
	m.mu.Lock()
	m.gated++
	m.mu.Unlock()
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		obj := newObj()
		if err := c.Get(ctx, req.NamespacedName, obj); err != nil {
			if apierrors.IsNotFound(err) {
				return reconcile.Result{}, nil
			}
			return reconcile.Result{}, fmt.Errorf("shard: reading %s: %w", req.NamespacedName, err)
		}
		passCtx, done, ok := m.Admit(ctx, obj.GetUID())
		if !ok {
			return reconcile.Result{}, nil
		}
		defer done()
		return r.Reconcile(passCtx, req)
	})
}
