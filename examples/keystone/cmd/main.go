package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
	"github.com/c5c3/reconciler-sdk/examples/keystone/webhook"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/operator"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// flags are the operator's command-line settings: those every operator on
// multicluster.RunOperator shares (the admission webhooks' among them), the health
// check's (reconciler: its outbound policy and base URL) and the rotation CronJobs'.
type flags struct {
	multicluster.OperatorOptions
	reconciler    keystone.Options
	operatorImage string
	rotationSA    string
}

// operatorImageEnv is the environment variable --operator-image defaults to: the
// shipped manifest (../config/manager) sets it to the manager container's own image.
const operatorImageEnv = "OPERATOR_IMAGE"

// errNoOperatorImage is returned by run when neither --operator-image nor
// $OPERATOR_IMAGE names the operator's image.
var errNoOperatorImage = errors.New("the operator's own image is unknown: set --operator-image or " + operatorImageEnv +
	" (the rotation CronJobs run it)")

// defaultFlags are the settings without any flag: a cluster-wide operator under
// keystone.FieldManager without target clusters, whose rotation CronJobs run the image
// $OPERATOR_IMAGE names, and whose admission webhooks (../config/webhook) are served
// once --webhook-cert-path names their certificate.
func defaultFlags() flags {
	f := flags{OperatorOptions: multicluster.DefaultOperatorOptions(), reconciler: keystone.DefaultOptions(), operatorImage: os.Getenv(operatorImageEnv)}
	f.FieldManager, f.LeaderElectionID = keystone.FieldManager, "keystone-operator.keystone.openstack.c5c3.io"
	f.AddToScheme = []func(*runtime.Scheme) error{v1alpha1.AddToScheme}
	f.SetupWebhooks = webhook.SetupWebhookWithManager
	return f
}

// bind binds the flags of f on fs (the health check's: --outbound-allow,
// --outbound-allow-cross-host-redirects, --health-check-base-url), --webhook-cert-dir as
// the deprecated name of --webhook-cert-path.
func (f *flags) bind(fs *flag.FlagSet) {
	f.BindFlags(fs)
	f.reconciler.BindFlags(fs)
	fs.Lookup("namespace").Usage = "reconcile the Keystones of this namespace only (all namespaces when empty); ClusterSecretStores are then not supported"
	fs.StringVar(&f.WebhookCertDir, "webhook-cert-dir", f.WebhookCertDir, "deprecated: use --webhook-cert-path")
	fs.StringVar(&f.operatorImage, "operator-image", f.operatorImage, "image of this operator, which the key- and password-rotation CronJobs run (default $"+operatorImageEnv+"; required)")
	fs.StringVar(&f.rotationSA, "rotation-service-account", f.rotationSA, "ServiceAccount, in each Keystone's namespace, of the key- and password-rotation pods; it must exist there and hold get and update on the Keystone's <name>-fernet-keys, <name>-credential-keys and <name>-db-password Secrets. Empty (the default): the operator makes <name>-rotation with a Role and RoleBinding granting exactly that, per Keystone")
}

// main runs the operator, or, given a command (`<operator image> rotate-keys --secret
// ...`), the command a rotation CronJob runs.
func main() {
	f := defaultFlags()
	os.Exit(operator.Main("keystone-operator", f.bind, func(ctx context.Context, cfg *rest.Config) error {
		if flag.NArg() > 0 {
			return runCommand(ctx, cfg, flag.Args())
		}
		return run(ctx, cfg, f)
	}))
}

// run runs the operator on the cluster behind cfg until ctx ends: the Keystone and the
// KeystoneIdentityBackend reconcilers. Without an operator image it refuses to start
// ([errNoOperatorImage]).
func run(ctx context.Context, cfg *rest.Config, f flags) error {
	if f.operatorImage == "" {
		return errNoOperatorImage
	}
	return multicluster.RunOperator(ctx, cfg, f.OperatorOptions, func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
		ropts := f.reconciler
		ropts.NamespaceScoped, ropts.OperatorImage, ropts.RotationServiceAccount = f.Namespace != "", f.operatorImage, f.rotationSA
		ropts.Recorder = mgr.GetLocalManager().GetEventRecorder(keystone.FieldManager)
		var err error
		if ropts.Metrics, err = reconcile.NewMetrics(reconcile.DefaultMetricsOptions(keystone.MetricsPrefix)); err != nil {
			return err
		}
		r, err := keystone.NewReconciler(resolver, ropts)
		if err != nil {
			return err
		}
		backends, err := identitybackend.NewReconciler(resolver, identitybackend.DefaultOptions())
		if err != nil {
			return err
		}
		return errors.Join(r.SetupWithManager(ctx, mgr), backends.SetupWithManager(ctx, mgr))
	})
}

// commands are what the rotation CronJobs run: rotate-keys rotates a key repository
// Secret at most once per interval (rotation.RunRotateKeys), rotate-password stages a
// new database password the operator then switches to (rotation.RunRotatePassword).
var commands = map[string]func(ctx context.Context, c client.Client, args []string) error{
	rotation.RotateKeysCommand: func(ctx context.Context, c client.Client, args []string) error {
		return rotation.RunRotateKeys(ctx, c, args, time.Now)
	},
	rotation.RotatePasswordCommand: rotation.RunRotatePassword,
}

// runCommand runs the command args[0] of [commands] with the rest of args, through a
// client of cfg.
func runCommand(ctx context.Context, cfg *rest.Config, args []string) error {
	command, ok := commands[args[0]]
	if !ok {
		return fmt.Errorf("unknown command %q: want %s or %s", args[0], rotation.RotateKeysCommand, rotation.RotatePasswordCommand)
	}
	scheme, err := operator.NewScheme(v1alpha1.AddToScheme)
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	return command(ctx, c, args[1:]) // its errors name the command
}
