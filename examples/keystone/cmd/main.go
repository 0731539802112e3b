package main

import (
	"context"
	"flag"
	"os"
	"time"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/controller"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
)

// flags are the operator's command-line settings.
type flags struct {
	metricsAddr, probeAddr string
	leaderElect            bool
	namespace              string
	clustersNamespace      string
	operatorImage          string
	rotationSA             string
}

func main() {
	// The key-rotation CronJobs run this binary: `<operator image> rotate-keys --secret ...`.
	if len(os.Args) > 1 && os.Args[1] == controller.RotateKeysCommand {
		if err := rotateKeys(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), os.Args[2:]); err != nil {
			ctrl.Log.WithName("rotate-keys").Error(err, "key rotation failed")
			os.Exit(1)
		}
		return
	}
	// The password-rotation CronJob runs it too: `<operator image> rotate-password --secret ...`.
	if len(os.Args) > 1 && os.Args[1] == controller.RotatePasswordCommand {
		if err := rotatePassword(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), os.Args[2:]); err != nil {
			ctrl.Log.WithName("rotate-password").Error(err, "staging a database password failed")
			os.Exit(1)
		}
		return
	}
	var f flags
	flag.StringVar(&f.metricsAddr, "metrics-bind-address", ":8080", "address the metrics endpoint binds to; 0 turns it off")
	flag.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "address the health probes bind to; 0 turns them off")
	flag.BoolVar(&f.leaderElect, "leader-elect", false, "elect a leader, so that only one replica reconciles")
	flag.StringVar(&f.namespace, "namespace", "", "reconcile the Keystones of this namespace only (all namespaces when empty); ClusterSecretStores are then not supported")
	flag.StringVar(&f.clustersNamespace, "clusters-namespace", "", "namespace of the kubeconfig Secrets that register target clusters (none when empty)")
	flag.StringVar(&f.operatorImage, "operator-image", controller.DefaultOperatorImage, "image of this operator, which the key- and password-rotation CronJobs run")
	flag.StringVar(&f.rotationSA, "rotation-service-account", "", "ServiceAccount, in each Keystone's namespace, of the key- and password-rotation pods; it must exist there and hold get and update on the Keystone's <name>-fernet-keys, <name>-credential-keys and <name>-db-password Secrets. Empty (the default): the operator makes <name>-rotation with a Role and RoleBinding granting exactly that, per Keystone")
	logConfig := textlogger.NewConfig()
	logConfig.AddFlags(flag.CommandLine) // -v, -vmodule
	flag.Parse()
	ctrl.SetLogger(textlogger.NewLogger(logConfig))
	if err := run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), f); err != nil {
		ctrl.Log.WithName("setup").Error(err, "keystone-operator stopped")
		os.Exit(1)
	}
}

// newScheme holds every kind the operator reads or writes.
func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, esov1.AddToScheme, esov1alpha1.AddToScheme, certmanagerv1.AddToScheme, mariadbv1alpha1.AddToScheme,
		gatewayv1.Install, v1alpha1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return scheme, nil
}

// run runs the operator on the cluster behind cfg until ctx ends.
func run(ctx context.Context, cfg *rest.Config, f flags) error {
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	var namespaces []string
	if f.namespace != "" {
		namespaces = []string{f.namespace}
	}
	mgr, err := multicluster.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: f.metricsAddr},
		HealthProbeBindAddress: f.probeAddr,
		LeaderElection:         f.leaderElect,
		LeaderElectionID:       "keystone-operator.keystone.openstack.c5c3.io",
		// Secrets and ConfigMaps are cached only when the operator wrote them (or ESO
		// synced them with its label), so memory does not grow with the cluster.
		Cache:  multicluster.CacheOptions(controller.FieldManager, f.clustersNamespace, namespaces...),
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: reconcile.UncachedObjects()}},
	}, multicluster.ManagerOptions{ClustersNamespace: f.clustersNamespace, FieldManager: controller.FieldManager})
	if err != nil {
		return err
	}
	resolver, err := multicluster.NewResolver(ctx, mgr, multicluster.ResolverOptions{
		Applier: apply.ApplierOptions{FieldManager: controller.FieldManager}})
	if err != nil {
		return err
	}
	metrics, err := reconcile.NewMetrics(reconcile.DefaultMetricsOptions(controller.MetricsPrefix))
	if err != nil {
		return err
	}
	opts := controller.DefaultOptions()
	opts.NamespaceScoped = f.namespace != ""
	opts.Metrics = metrics
	opts.Recorder = mgr.GetLocalManager().GetEventRecorder(controller.FieldManager)
	opts.OperatorImage, opts.RotationServiceAccount = f.operatorImage, f.rotationSA
	r, err := controller.NewReconciler(resolver, opts)
	if err != nil {
		return err
	}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		return err
	}
	backends, err := controller.NewIdentityBackendReconciler(resolver, controller.DefaultIdentityBackendOptions())
	if err != nil {
		return err
	}
	if err := backends.SetupWithManager(ctx, mgr); err != nil {
		return err
	}
	if err := mgr.GetLocalManager().AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.GetLocalManager().AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// rotateKeys is the rotate-keys command: one rotation of a key repository Secret, at
// most once per interval (see controller.RotateKeys).
func rotateKeys(ctx context.Context, cfg *rest.Config, args []string) error {
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	return controller.RunRotateKeys(ctx, c, args, time.Now)
}

// rotatePassword is the rotate-password command: it stages a new database password in
// the password Secret, which the operator then switches to (see
// controller.RotatePassword).
func rotatePassword(ctx context.Context, cfg *rest.Config, args []string) error {
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	return controller.RunRotatePassword(ctx, c, args)
}
