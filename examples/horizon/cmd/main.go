package main

import (
	"context"
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/examples/horizon/webhook"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/operator"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

func main() {
	opts, ropts := defaultOptions(), controller.DefaultOptions()
	os.Exit(operator.Main("horizon-operator", func(fs *flag.FlagSet) { bindFlags(&opts, &ropts, fs) },
		func(ctx context.Context, cfg *rest.Config) error { return run(ctx, cfg, opts, ropts) }))
}

// defaultOptions are the settings without any flag: a cluster-wide operator under
// controller.FieldManager without target clusters, whose admission webhooks
// (../config/webhook) are served once --webhook-cert-path names their certificate.
func defaultOptions() multicluster.OperatorOptions {
	opts := multicluster.DefaultOperatorOptions()
	opts.FieldManager, opts.LeaderElectionID = controller.FieldManager, "horizon-operator.horizon.openstack.c5c3.io"
	opts.AddToScheme = []func(*runtime.Scheme) error{controller.AddToScheme}
	opts.SetupWebhooks = webhook.SetupWebhookWithManager
	return opts
}

// bindFlags binds the flags of opts and of the health check (ropts: --outbound-allow,
// --outbound-allow-cross-host-redirects, --health-check-base-url) on fs,
// --webhook-cert-dir as the deprecated name of --webhook-cert-path.
func bindFlags(opts *multicluster.OperatorOptions, ropts *controller.Options, fs *flag.FlagSet) {
	opts.BindFlags(fs)
	ropts.BindFlags(fs)
	fs.Lookup("namespace").Usage = "reconcile the Horizons of this namespace only (all namespaces when empty); ClusterSecretStores are then not supported"
	fs.StringVar(&opts.WebhookCertDir, "webhook-cert-dir", opts.WebhookCertDir, "deprecated: use --webhook-cert-path")
}

// run runs the operator on the cluster behind cfg until ctx ends, its reconciler built
// from ropts (its flags' settings) with the namespace scope, metrics and event recorder
// of the run.
func run(ctx context.Context, cfg *rest.Config, opts multicluster.OperatorOptions, ropts controller.Options) error {
	return multicluster.RunOperator(ctx, cfg, opts, func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
		metrics, err := reconcile.NewMetrics(reconcile.DefaultMetricsOptions(controller.MetricsPrefix))
		if err != nil {
			return err
		}
		ropts.NamespaceScoped = opts.Namespace != ""
		ropts.Metrics = metrics
		ropts.Recorder = mgr.GetLocalManager().GetEventRecorder(controller.FieldManager)
		r, err := controller.NewReconciler(resolver, ropts)
		if err != nil {
			return err
		}
		return r.SetupWithManager(ctx, mgr)
	})
}
