package main

import (
	"context"
	"flag"
	"fmt"
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
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
)

// flags are the operator's command-line settings: those every operator on
// multicluster.RunOperator shares, the rotation CronJobs' and the admission webhook's.
type flags struct {
	multicluster.OperatorOptions
	operatorImage  string
	rotationSA     string
	webhookCertDir string
	webhookPort    int
}

// defaultFlags are the settings without any flag: a cluster-wide operator under
// keystone.FieldManager without target clusters or webhook, running
// DefaultOperatorImage.
func defaultFlags() flags {
	f := flags{OperatorOptions: multicluster.DefaultOperatorOptions(), operatorImage: keystone.DefaultOperatorImage, webhookPort: 9443}
	f.FieldManager = keystone.FieldManager
	f.LeaderElectionID = "keystone-operator.keystone.openstack.c5c3.io"
	return f
}

// bind binds the flags of f on fs.
func (f *flags) bind(fs *flag.FlagSet) {
	f.BindFlags(fs)
	fs.Lookup("namespace").Usage = "reconcile the Keystones of this namespace only (all namespaces when empty); ClusterSecretStores are then not supported"
	fs.StringVar(&f.operatorImage, "operator-image", f.operatorImage, "image of this operator, which the key- and password-rotation CronJobs run")
	fs.StringVar(&f.rotationSA, "rotation-service-account", f.rotationSA, "ServiceAccount, in each Keystone's namespace, of the key- and password-rotation pods; it must exist there and hold get and update on the Keystone's <name>-fernet-keys, <name>-credential-keys and <name>-db-password Secrets. Empty (the default): the operator makes <name>-rotation with a Role and RoleBinding granting exactly that, per Keystone")
	fs.StringVar(&f.webhookCertDir, "webhook-cert-dir", f.webhookCertDir, "directory with tls.crt and tls.key of the admission webhook; empty serves no webhook")
	fs.IntVar(&f.webhookPort, "webhook-port", f.webhookPort, "port the admission webhook listens on")
}

func main() {
	// The key-rotation CronJobs run this binary: `<operator image> rotate-keys --secret ...`.
	if len(os.Args) > 1 && os.Args[1] == rotation.RotateKeysCommand {
		if err := rotateKeys(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), os.Args[2:]); err != nil {
			ctrl.Log.WithName("rotate-keys").Error(err, "key rotation failed")
			os.Exit(1)
		}
		return
	}
	// The password-rotation CronJob runs it too: `<operator image> rotate-password --secret ...`.
	if len(os.Args) > 1 && os.Args[1] == rotation.RotatePasswordCommand {
		if err := rotatePassword(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), os.Args[2:]); err != nil {
			ctrl.Log.WithName("rotate-password").Error(err, "staging a database password failed")
			os.Exit(1)
		}
		return
	}
	f := defaultFlags()
	f.bind(flag.CommandLine)
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
	opts := f.OperatorOptions
	opts.Manager.Scheme = scheme
	if f.webhookCertDir != "" {
		opts.Manager.WebhookServer = newWebhookServer(f.webhookCertDir, f.webhookPort)
	}
	return multicluster.RunOperator(ctx, cfg, opts, func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
		metrics, err := reconcile.NewMetrics(reconcile.DefaultMetricsOptions(keystone.MetricsPrefix))
		if err != nil {
			return err
		}
		ropts := keystone.DefaultOptions()
		ropts.NamespaceScoped = opts.Namespace != ""
		ropts.Metrics = metrics
		ropts.Recorder = mgr.GetLocalManager().GetEventRecorder(keystone.FieldManager)
		ropts.OperatorImage, ropts.RotationServiceAccount = f.operatorImage, f.rotationSA
		r, err := keystone.NewReconciler(resolver, ropts)
		if err != nil {
			return err
		}
		if err := r.SetupWithManager(ctx, mgr); err != nil {
			return err
		}
		backends, err := identitybackend.NewReconciler(resolver, identitybackend.DefaultOptions())
		if err != nil {
			return err
		}
		if err := backends.SetupWithManager(ctx, mgr); err != nil {
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

// rotateKeys is the rotate-keys command: one rotation of a key repository Secret, at
// most once per interval (see rotation.RotateKeys).
func rotateKeys(ctx context.Context, cfg *rest.Config, args []string) error {
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	return rotation.RunRotateKeys(ctx, c, args, time.Now)
}

// rotatePassword is the rotate-password command: it stages a new database password in
// the password Secret, which the operator then switches to (see
// rotation.RotatePassword).
func rotatePassword(ctx context.Context, cfg *rest.Config, args []string) error {
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	return rotation.RunRotatePassword(ctx, c, args)
}
