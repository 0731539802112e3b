package shard

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Requeue is the source a sharded controller watches next to its own kind: whenever the
// member's [Member.Active] ranges grow, it lists the kind through c (the manager's cache)
// into newList() and enqueues every object whose UID lies in the ranges just gained, so
// that a range taken over is reconciled although its objects' events went to another
// replica (or to none during the hand-off). At its start it enqueues the objects of the
// ranges already active.
//
// It is for informers that hold every object (client-side filtering). An informer
// behind [Member.ServerSideTransport] lists again when the ranges change, and the
// objects gained arrive as additions: watching Requeue too would reconcile them twice.
func Requeue(m *Member, c client.Reader, newList func() client.ObjectList) source.Source {
	return RequeueFor(m, c, newList, func(key client.ObjectKey) reconcile.Request {
		return reconcile.Request{NamespacedName: key}
	})
}

// RequeueFor is [Requeue] for a controller of another request type (a multicluster
// controller's), whose request for the object of key request returns.
func RequeueFor[R comparable](m *Member, c client.Reader, newList func() client.ObjectList, request func(client.ObjectKey) R) source.TypedSource[R] {
	return &requeue[R]{m: m, c: c, newList: newList, request: request}
}

type requeue[R comparable] struct {
	m       *Member
	c       client.Reader
	newList func() client.ObjectList
	request func(client.ObjectKey) R
}

// Start implements source.Source.
func (s *requeue[R]) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[R]) error {
	changes := s.m.Subscribe()
	go func() {
		var before Ranges
		next := s.m.Active()
		for {
			if gained := Subtract(next, before); len(gained) > 0 {
				if err := s.enqueue(ctx, q, gained); err != nil {
					log.FromContext(ctx).Error(err, "requeueing the objects of gained shard ranges", "ranges", gained.String())
				}
			}
			before = next
			select {
			case <-ctx.Done():
				return
			case next = <-changes:
			}
		}
	}()
	return nil
}

// enqueue adds a request for every object of the kind whose UID lies in rs.
func (s *requeue[R]) enqueue(ctx context.Context, q workqueue.TypedRateLimitingInterface[R], rs Ranges) error {
	list := s.newList()
	if err := s.c.List(ctx, list); err != nil {
		return fmt.Errorf("shard: listing to requeue: %w", err)
	}
	return meta.EachListItem(list, func(o runtime.Object) error {
		obj, ok := o.(client.Object)
		if ok && rs.Owns(obj.GetUID()) {
			q.Add(s.request(client.ObjectKeyFromObject(obj)))
		}
		return nil
	})
}

// String implements fmt.Stringer for the controller's logs.
func (s *requeue[R]) String() string { return "shard.Requeue(" + s.m.opts.Ring + ")" }
