package main

import (
	"flag"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2/textlogger"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/quickstart/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/quickstart/controller"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// Leader election (--leader-elect) takes a Lease and reports through Events:
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

func main() {
	var metricsAddr, probeAddr, namespace string
	var leaderElect bool
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "address the metrics endpoint binds to; 0 turns it off")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address the health probes bind to; 0 turns them off")
	flag.BoolVar(&leaderElect, "leader-elect", false, "elect a leader, so that only one replica reconciles")
	flag.StringVar(&namespace, "namespace", "", "watch and cache only this namespace (all namespaces when empty)")
	logConfig := textlogger.NewConfig()
	logConfig.AddFlags(flag.CommandLine) // -v, -vmodule
	flag.Parse()
	ctrl.SetLogger(textlogger.NewLogger(logConfig))
	log := ctrl.Log.WithName("setup")
	if err := run(metricsAddr, probeAddr, namespace, leaderElect); err != nil {
		log.Error(err, "memo-operator stopped")
		os.Exit(1)
	}
}

func run(metricsAddr, probeAddr, namespace string, leaderElect bool) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	// Cache only the ConfigMaps the operator wrote, and read Pods and ControllerRevisions
	// past the cache: the operator's memory does not grow with the cluster.
	cacheOpts := apply.CacheOptions(controller.FieldManager)
	if namespace != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         leaderElect,
		LeaderElectionID:       "memo-operator.quickstart.reconciler-sdk.c5c3.io",
		Cache:                  cacheOpts,
		Client:                 client.Options{Cache: &client.CacheOptions{DisableFor: reconcile.UncachedObjects()}},
	})
	if err != nil {
		return err
	}
	// One Applier for the operator: its own field manager, converged applies send nothing.
	applier := apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{
		FieldManager: controller.FieldManager, APIReader: mgr.GetAPIReader(),
	})
	metrics, err := reconcile.NewMetrics(reconcile.DefaultMetricsOptions("memo_operator"))
	if err != nil {
		return err
	}
	r, err := controller.NewMemoReconciler(applier, mgr.GetScheme(), mgr.GetAPIReader(), metrics)
	if err != nil {
		return err
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}
