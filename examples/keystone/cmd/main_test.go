package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
	"github.com/c5c3/reconciler-sdk/health"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/world"
)

// env is the control plane with the real controllers: the Deployments roll out.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{v1alpha1.AddToScheme},
		CRDPaths: []string{"../config/crd/bases"}, WebhookPaths: []string{"../config/webhook"}, Controllers: true}, &env))
}

// TestRun runs the command's run, given only a rest.Config and a command line, as the
// cluster-wide operator it is by default, with the admission webhooks served where the
// API server calls them. One run per process: it registers the controllers and their
// metrics globally.
func TestRun(t *testing.T) {
	certDir, port := env.WebhookFlags(t)
	f := parse(t, "--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--operator-image=registry.example/keystone-operator:test", "--webhook-cert-path="+certDir, "--webhook-port="+strconv.Itoa(port))
	testenv.Go(t, func(ctx context.Context) error { return run(ctx, env.Config, f) })
	if err := env.WaitForWebhookServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	t.Run("reconciles a Keystone", func(t *testing.T) { reconcilesAKeystone(t, ns) })
	t.Run("serves the webhooks", func(t *testing.T) { servesTheWebhooks(t, ns) })
}

// reconcilesAKeystone: the command reconciles a Keystone on a real control plane, its
// dependencies (the default ClusterSecretStore, the admin password, MariaDB) played by
// a world: every step up to the Deployment turns True. The health check requests the
// cluster-local Service URL, which this machine cannot resolve or reach, so
// KeystoneAPIReady stays False for a reason of its table.
func reconcilesAKeystone(t *testing.T, ns string) {
	k := newKeystone(ns, "keystone")
	if err := env.Client.Create(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	play := world.New(env.Client, world.WithMariaDB("mariadb"),
		world.WithSecret("openstack/keystone/admin", map[string][]byte{"password": []byte("pw")})).Hook(k)
	for _, c := range []string{keystone.ConditionSecretsReady, keystone.ConditionConfigReady,
		keystone.ConditionFernetKeysReady, keystone.ConditionCredentialKeysReady, keystone.ConditionIdentityBackendsReady,
		keystone.ConditionDatabaseReady, keystone.ConditionDeploymentReady} {
		testenv.ExpectConditionWhile(t, env.Client, k, c, metav1.ConditionTrue, play)
	}
	testenv.ExpectConditionWhile(t, env.Client, k, keystone.ConditionKeystoneAPIReady, metav1.ConditionFalse, play)
	if api := meta.FindStatusCondition(k.Status.Conditions, keystone.ConditionKeystoneAPIReady); !slices.Contains(
		[]string{health.ReasonEndpointNotReady, health.ReasonConnectionFailed, health.ReasonTimeout}, api.Reason) {
		t.Errorf("KeystoneAPIReady False for %s, want a reason of an unreachable endpoint", api.Reason)
	}
	if k.Status.Endpoint != names.Endpoint(k) {
		t.Errorf("status.endpoint = %q, want %q", k.Status.Endpoint, names.Endpoint(k))
	}
}

// servesTheWebhooks: with --webhook-cert-path the command serves the admission webhooks:
// a Keystone whose daily fernet rotation keeps too few keys is refused naming
// spec.fernet.maxActiveKeys, the same Keystone with enough keys is admitted and
// defaulted, and a KeystoneIdentityBackend with a bind password in config is refused.
func servesTheWebhooks(t *testing.T, ns string) {
	k := newKeystone(ns, "unsafe")
	k.Spec.Fernet = v1alpha1.KeyRepositorySpec{MaxActiveKeys: 3, RotationInterval: &metav1.Duration{Duration: 24 * time.Hour}}
	if err := env.Client.Create(t.Context(), k.DeepCopy()); err == nil || !strings.Contains(err.Error(), "spec.fernet.maxActiveKeys") ||
		!strings.Contains(err.Error(), "maxActiveKeys must be at least 5") {
		t.Fatalf("Keystone keeping 3 fernet keys rotated daily: %v, want it refused naming the smallest safe spec.fernet.maxActiveKeys", err)
	}
	k.Spec.Fernet.MaxActiveKeys = 5
	if err := env.Client.Create(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	if k.Spec.SecretStoreRef == nil || k.Spec.SecretStoreRef.Name != world.DefaultClusterSecretStore {
		t.Errorf("spec.secretStoreRef = %+v, want the default store", k.Spec.SecretStoreRef)
	}
	if k.Spec.Database.MariaDBRef.Namespace != ns {
		t.Errorf("spec.database.mariaDBRef.namespace = %q, want the Keystone's %q", k.Spec.Database.MariaDBRef.Namespace, ns)
	}
	b := &v1alpha1.KeystoneIdentityBackend{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "corp"},
		Spec: v1alpha1.KeystoneIdentityBackendSpec{
			KeystoneRef: v1alpha1.LocalObjectReference{Name: k.Name},
			Domain:      "corp",
			Config:      map[string]map[string]string{"ldap": {"url": "ldaps://ldap.example.com", "password": "bind"}},
		},
	}
	err := env.Client.Create(t.Context(), b)
	if err == nil || !strings.Contains(err.Error(), "spec.config[ldap][password]: Forbidden") {
		t.Fatalf("backend with a bind password in config: err = %v, want it refused naming spec.config[ldap][password]", err)
	}
}

// newKeystone returns a minimal Keystone named name in ns: its database on the MariaDB
// "mariadb", its admin password at the remote key openstack/keystone/admin.
func newKeystone(ns, name string) *v1alpha1.Keystone {
	return &v1alpha1.Keystone{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.KeystoneSpec{
		Image:     "registry.example/keystone:2025.1",
		Database:  v1alpha1.DatabaseSpec{MariaDBRef: v1alpha1.MariaDBRef{Name: "mariadb"}},
		Bootstrap: v1alpha1.BootstrapSpec{AdminPassword: v1alpha1.RemoteKeySpec{RemoteKey: "openstack/keystone/admin"}},
	}}
}

// parse returns the flags of the command line args, from defaultFlags.
func parse(t *testing.T, args ...string) flags {
	t.Helper()
	f := defaultFlags()
	fs := flag.NewFlagSet("keystone-operator", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.bind(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFlags: the webhook is served from --webhook-cert-path (or its deprecated name
// --webhook-cert-dir) on --webhook-port (9443 by default), none without a certificate
// directory; the rotation CronJobs' and the health check's flags set their fields.
func TestFlags(t *testing.T) {
	cases := map[string]struct {
		args []string
		want func(*flags)
	}{
		"Defaults": {want: func(*flags) {}},
		"Webhook": {args: []string{"--webhook-cert-path", "/certs", "--webhook-port", "10250"},
			want: func(f *flags) { f.WebhookCertDir, f.WebhookPort = "/certs", 10250 }},
		"DeprecatedCertDir": {args: []string{"--webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs"},
			want: func(f *flags) { f.WebhookCertDir = "/tmp/k8s-webhook-server/serving-certs" }},
		"Rotation": {args: []string{"--operator-image", "registry.example/keystone-operator:1", "--rotation-service-account", "rotator"},
			want: func(f *flags) { f.operatorImage, f.rotationSA = "registry.example/keystone-operator:1", "rotator" }},
		"HealthCheck": {args: []string{"--health-check-base-url", "http://127.0.0.1:5000", "--outbound-allow", "127.0.0.1"},
			want: func(f *flags) {
				f.reconciler.ProbeBase = "http://127.0.0.1:5000"
				f.reconciler.Outbound.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
			}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := parse(t, tc.args...)
			want := defaultFlags()
			tc.want(&want)
			if got.WebhookCertDir != want.WebhookCertDir || got.WebhookPort != want.WebhookPort ||
				got.operatorImage != want.operatorImage || got.rotationSA != want.rotationSA {
				t.Errorf("parse(%q): cert dir %q, port %d, image %q, service account %q; want %q, %d, %q, %q", tc.args,
					got.WebhookCertDir, got.WebhookPort, got.operatorImage, got.rotationSA,
					want.WebhookCertDir, want.WebhookPort, want.operatorImage, want.rotationSA)
			}
			if got.reconciler.ProbeBase != want.reconciler.ProbeBase || !slices.Equal(got.reconciler.Outbound.AllowCIDRs, want.reconciler.Outbound.AllowCIDRs) {
				t.Errorf("parse(%q): health check base %q, allowed %v; want %q, %v", tc.args, got.reconciler.ProbeBase,
					got.reconciler.Outbound.AllowCIDRs, want.reconciler.ProbeBase, want.reconciler.Outbound.AllowCIDRs)
			}
			if got.Operator().ServesWebhooks() != (want.WebhookCertDir != "") {
				t.Errorf("parse(%q): serves webhooks %v", tc.args, got.Operator().ServesWebhooks())
			}
		})
	}
}

// runCommand runs the rotation CronJobs' commands (each refuses a command line without
// --secret) and refuses another, naming it.
func TestRunCommand(t *testing.T) {
	for args, want := range map[string]error{
		rotation.RotateKeysCommand:     rotation.ErrInvalidRotateKeysArgs,
		rotation.RotatePasswordCommand: rotation.ErrInvalidRotatePasswordArgs,
	} {
		if err := runCommand(t.Context(), env.Config, []string{args}); !errors.Is(err, want) {
			t.Errorf("runCommand(%q) = %v, want %v", args, err, want)
		}
	}
	err := runCommand(t.Context(), env.Config, []string{"rotate-everything"})
	if err == nil || !strings.Contains(err.Error(), `unknown command "rotate-everything"`) {
		t.Errorf("runCommand(rotate-everything) = %v, want it refused by name", err)
	}
}

// TestOperatorImage: --operator-image defaults to $OPERATOR_IMAGE, the flag wins over it,
// and without either run refuses to start, naming both, before it reaches the cluster.
func TestOperatorImage(t *testing.T) {
	t.Run("environment", func(t *testing.T) {
		t.Setenv(operatorImageEnv, "registry.example/keystone-operator:env")
		if got := parse(t).operatorImage; got != "registry.example/keystone-operator:env" {
			t.Errorf("operator image = %q, want $%s's", got, operatorImageEnv)
		}
		if got := parse(t, "--operator-image", "registry.example/keystone-operator:flag").operatorImage; got != "registry.example/keystone-operator:flag" {
			t.Errorf("operator image = %q, want the flag's", got)
		}
	})
	t.Run("none", func(t *testing.T) {
		t.Setenv(operatorImageEnv, "")
		f := parse(t, "--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0")
		err := run(t.Context(), env.Config, f)
		if !errors.Is(err, errNoOperatorImage) || !strings.Contains(err.Error(), "--operator-image") ||
			!strings.Contains(err.Error(), operatorImageEnv) {
			t.Fatalf("run without an operator image = %v, want an error naming --operator-image and %s", err, operatorImageEnv)
		}
	})
}
