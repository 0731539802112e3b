package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/examples/quickstart/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/quickstart/controller"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// Leader election (--leader-elect, on by default) takes a Lease and reports through
// Events; the resolver of multicluster.RunOperator reads the kube-system Namespace once
// for the management cluster's identity; /metrics (HTTPS by default) lets in only the
// scrapers the API server authenticates and authorizes:
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get
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
func defaultOptions() multicluster.OperatorOptions {
	opts := multicluster.DefaultOperatorOptions()
	opts.FieldManager = controller.FieldManager
	opts.LeaderElectionID = "memo-operator.quickstart.reconciler-sdk.c5c3.io"
	return opts
}

// run runs the operator on the cluster behind cfg until ctx ends. The cache holds only
// the ConfigMaps the operator wrote, and Pods and ControllerRevisions are read past it:
// the operator's memory does not grow with the cluster.
func run(ctx context.Context, cfg *rest.Config, opts multicluster.OperatorOptions) error {
	if opts.ClustersNamespace != "" {
		return fmt.Errorf("--clusters-namespace %q: a Memo has no target cluster, its children stay on the management cluster",
			opts.ClustersNamespace)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	opts.Manager.Scheme = scheme
	return multicluster.RunOperator(ctx, cfg, opts, func(_ context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
		metrics, err := reconcile.NewMetrics(reconcile.DefaultMetricsOptions("memo_operator"))
		if err != nil {
			return err
		}
		// The management cluster's Applier: the operator's own field manager, converged
		// applies send nothing. Memos have no target cluster: the controller runs on
		// the manager's local (management) cluster.
		local := resolver.Local()
		r, err := controller.NewMemoReconciler(local.Client, scheme, local.APIReader, metrics)
		if err != nil {
			return err
		}
		return r.SetupWithManager(mgr.GetLocalManager())
	})
}
