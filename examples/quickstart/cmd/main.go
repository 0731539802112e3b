package main

import (
	"context"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/c5c3/reconciler-sdk/examples/quickstart/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/quickstart/controller"
	"github.com/c5c3/reconciler-sdk/operator"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// Leader election (--leader-elect, on by default) takes a Lease, and so does each
// replica of a shard ring (--sharded); leader election reports through Events; /metrics (HTTPS by default) lets in only the scrapers the API server
// authenticates and authorizes:
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

func main() {
	opts := defaultOptions()
	os.Exit(operator.Main("memo-operator", opts.BindFlags,
		func(ctx context.Context, cfg *rest.Config) error { return operator.Run(ctx, cfg, opts, setup) }))
}

// defaultOptions are the settings without any flag: a cluster-wide operator under
// controller.FieldManager. The cache holds only the ConfigMaps the operator wrote, and
// Pods and ControllerRevisions are read past it: the operator's memory does not grow
// with the cluster.
func defaultOptions() operator.Options {
	opts := operator.DefaultOptions()
	opts.FieldManager = controller.FieldManager
	opts.LeaderElectionID = "memo-operator.quickstart.reconciler-sdk.c5c3.io"
	opts.AddToScheme = []func(*runtime.Scheme) error{v1alpha1.AddToScheme}
	return opts
}

// setup builds the MemoReconciler on the operator's Applier (its own field manager,
// converged applies send nothing) and registers its controller (controller.Register:
// with --sharded, gated by the replica's shard of the Memos).
func setup(_ context.Context, op operator.Operator) error {
	metrics, err := reconcile.NewMetrics(reconcile.DefaultMetricsOptions("memo_operator"))
	if err != nil {
		return err
	}
	r, err := controller.NewMemoReconciler(op.Applier, op.Scheme, op.APIReader, metrics)
	if err != nil {
		return err
	}
	return controller.Register(op, "", r)
}
