package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// flags are the operator's command-line settings: those every operator on
// multicluster.RunOperator shares, and the admission webhook's.
type flags struct {
	multicluster.OperatorOptions
	webhookCertDir string
	webhookPort    int
}

// defaultFlags are the settings without any flag: a cluster-wide operator under
// controller.FieldManager without target clusters or webhook.
func defaultFlags() flags {
	f := flags{OperatorOptions: multicluster.DefaultOperatorOptions(), webhookPort: 9443}
	f.FieldManager = controller.FieldManager
	f.LeaderElectionID = "horizon-operator.horizon.openstack.c5c3.io"
	return f
}

// bind binds the flags of f on fs.
func (f *flags) bind(fs *flag.FlagSet) {
	f.BindFlags(fs)
	fs.Lookup("namespace").Usage = "reconcile the Horizons of this namespace only (all namespaces when empty); ClusterSecretStores are then not supported"
	fs.StringVar(&f.webhookCertDir, "webhook-cert-dir", f.webhookCertDir, "directory with tls.crt and tls.key of the admission webhook; empty serves no webhook")
	fs.IntVar(&f.webhookPort, "webhook-port", f.webhookPort, "port the admission webhook listens on")
}

func main() {
	f := defaultFlags()
	f.bind(flag.CommandLine)
	logConfig := textlogger.NewConfig()
	logConfig.AddFlags(flag.CommandLine) // -v, -vmodule
	flag.Parse()
	ctrl.SetLogger(textlogger.NewLogger(logConfig))
	if err := run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), f); err != nil {
		ctrl.Log.WithName("setup").Error(err, "horizon-operator stopped")
		os.Exit(1)
	}
}

// newScheme holds every kind the operator reads or writes.
func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, esov1.AddToScheme, gatewayv1.Install, vpav1.AddToScheme, v1alpha1.AddToScheme,
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
	opts := f.OperatorOptions
	opts.Manager.Scheme = scheme
	if f.webhookCertDir != "" {
		opts.Manager.WebhookServer = newWebhookServer(f.webhookCertDir, f.webhookPort)
	}
	return multicluster.RunOperator(ctx, cfg, opts, func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
		metrics, err := reconcile.NewMetrics(reconcile.DefaultMetricsOptions(controller.MetricsPrefix))
		if err != nil {
			return err
		}
		ropts := controller.DefaultOptions()
		ropts.NamespaceScoped = opts.Namespace != ""
		ropts.Metrics = metrics
		ropts.Recorder = mgr.GetLocalManager().GetEventRecorder(controller.FieldManager)
		r, err := controller.NewReconciler(resolver, ropts)
		if err != nil {
			return err
		}
		if err := r.SetupWithManager(ctx, mgr); err != nil {
			return err
		}
		if f.webhookCertDir != "" {
			if err := setupWebhook(mgr.GetLocalManager()); err != nil {
				return fmt.Errorf("setting up the admission webhook: %w", err)
			}
		}
		return nil
	})
}
