package controller

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/examples/quickstart/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/operator"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/shard"
)

// Resources of the Memos and of the children a MemoReconciler writes, as a sharded
// replica registers them with its ring member.
var (
	memoResource   = v1alpha1.GroupVersion.WithResource("memos").GroupResource()
	childResources = []schema.GroupResource{
		{Group: appsv1.GroupName, Resource: "deployments"}, {Resource: "services"}, {Resource: "configmaps"},
	}
)

// Register registers rec, a MemoReconciler or a reconciler wrapping one, as the Memo
// controller on op.Manager: named name (empty: after the kind), with the watches of
// [MemoReconciler.SetupWithManager]. When op.Shard is set (operator.Options.Sharded) the
// controller is one replica's share of the Memos: rec is gated by shard.Gate (a Memo
// outside the replica's ranges is left to its owner), the children kinds are registered
// with Shard.SelectOwned (with --shard-selectors their informers hold only this
// replica's children), and the Memos of a range the replica gains are requeued
// (shard.Requeue), unless the API server selects the Memos itself (Shard.ServerSide:
// Shard.Select names them, and a range gained arrives as additions).
func Register(op operator.Operator, name string, rec crreconcile.Reconciler) error {
	b := ctrl.NewControllerManagedBy(op.Manager).
		For(&v1alpha1.Memo{}, builder.WithPredicates(reconcile.IgnoreStatusWrites())).
		Owns(&appsv1.Deployment{}).Owns(&corev1.Service{}).Owns(&corev1.ConfigMap{})
	if name != "" {
		b = b.Named(name)
	}
	if m := op.Shard; m != nil {
		rec = shard.Gate(m, op.Manager.GetClient(), func() *v1alpha1.Memo { return &v1alpha1.Memo{} }, rec)
		m.SelectOwned(childResources...)
		if m.ServerSide() {
			m.Select(memoResource)
		} else {
			b = b.WatchesRawSource(shard.Requeue(m, op.Manager.GetClient(), func() client.ObjectList { return &v1alpha1.MemoList{} }))
		}
	}
	return b.Complete(rec)
}
