package main

import (
	"context"
	"flag"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/reconciler-sdk/examples/quickstart/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/quickstart/controller"
	"github.com/c5c3/reconciler-sdk/operator"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// Leader election (--leader-elect, on by default) takes a Lease and reports through
// Events; /metrics (HTTPS by default) lets in only the scrapers the API server
// authenticates and authorizes:
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

func main() {
	opts := defaultOptions()
	opts.BindFlags(flag.CommandLine)
	logConfig := textlogger.NewConfig()
	logConfig.AddFlags(flag.CommandLine) // -v, -vmodule
	flag.Parse()
	ctrl.SetLogger(textlogger.NewLogger(logConfig))
	if err := run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), opts); err != nil {
		ctrl.Log.WithName("setup").Error(err, "memo-operator stopped")
		os.Exit(1)
	}
}

// defaultOptions are the settings without any flag: a cluster-wide operator under
// controller.FieldManager.
func defaultOptions() operator.Options {
	opts := operator.DefaultOptions()
	opts.FieldManager = controller.FieldManager
	opts.LeaderElectionID = "memo-operator.quickstart.reconciler-sdk.c5c3.io"
	return opts
}

// run runs the operator on the cluster behind cfg until ctx ends. The cache holds only
// the ConfigMaps the operator wrote, and Pods and ControllerRevisions are read past it:
// the operator's memory does not grow with the cluster.
func run(ctx context.Context, cfg *rest.Config, opts operator.Options) error {
	scheme, err := operator.NewScheme(v1alpha1.AddToScheme)
	if err != nil {
		return err
	}
	opts.Manager.Scheme = scheme
	return operator.Run(ctx, cfg, opts, setup)
}

// setup builds the MemoReconciler on the operator's Applier (its own field manager,
// converged applies send nothing) and registers its controller.
func setup(_ context.Context, op operator.Operator) error {
	metrics, err := reconcile.NewMetrics(reconcile.DefaultMetricsOptions("memo_operator"))
	if err != nil {
		return err
	}
	r, err := controller.NewMemoReconciler(op.Applier, op.Scheme, op.APIReader, metrics)
	if err != nil {
		return err
	}
	return r.SetupWithManager(op.Manager)
}
