package main

import (
	"context"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/reconcile"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	scheme, err := testenv.NewSchemeWith(v1alpha1.AddToScheme)
	if err != nil {
		panic(err)
	}
	os.Exit(testenv.Main(m, testenv.Options{Scheme: scheme, CRDPaths: []string{"../config/crd/bases"},
		WebhookPaths: []string{"../config/webhook"}, Controllers: true}, &env))
}

// TestRun runs the command's run, given only a rest.Config and its flags, as the
// operator of one namespace with the admission webhooks.
//
// reconcilesAKeystone: the command reconciles a Keystone of its namespace on a real
// control plane: every step up to the Deployment turns True. The health check requests
// the cluster-local Service URL, which this machine cannot resolve or reach, so
// KeystoneAPIReady stays False for a reason of its table.
func TestRun(t *testing.T) {
	ns := env.Namespace(t)
	// One run per process: it registers the controllers and their metrics globally.
	testenv.Go(t, func(ctx context.Context) error {
		f := defaultFlags()
		f.MetricsBindAddress, f.HealthProbeBindAddress, f.Namespace = "0", "0", ns
		f.LeaderElect = false // a local run
		return run(ctx, env.Config, webhookFlags(t, f))
	})
	if err := env.WaitForWebhookServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Run("reconciles a Keystone", func(t *testing.T) { reconcilesAKeystone(t, ns) })
	t.Run("serves the webhooks", func(t *testing.T) { servesTheWebhooks(t, ns) })
}

func reconcilesAKeystone(t *testing.T, ns string) {
	ctx := context.Background()

	store := &esov1.SecretStore{
		ObjectMeta: metav1.ObjectMeta{Name: "openbao", Namespace: ns},
		Spec: esov1.SecretStoreSpec{Provider: &apiextensionsv1.JSON{
			Raw: []byte(`{"vault":{"server":"http://openbao.openbao.svc:8200","path":"secret","version":"v2"}}`)}},
	}
	if err := env.Client.Create(ctx, store); err != nil {
		t.Fatal(err)
	}
	if _, err := testenv.MarkSecretStoreReady(ctx, env.Client, client.ObjectKeyFromObject(store)); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, &mariadbv1alpha1.MariaDB{ObjectMeta: metav1.ObjectMeta{Name: "mariadb", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	if _, err := testenv.MarkMariaDBReady(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: "mariadb"}); err != nil {
		t.Fatal(err)
	}
	k := &v1alpha1.Keystone{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keystone"},
		Spec: v1alpha1.KeystoneSpec{
			Image:          "registry.example/keystone:2025.1",
			SecretStoreRef: &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: store.Name},
			Database:       v1alpha1.DatabaseSpec{MariaDBRef: v1alpha1.MariaDBRef{Name: "mariadb"}},
			Bootstrap:      v1alpha1.BootstrapSpec{AdminPassword: v1alpha1.RemoteKeySpec{RemoteKey: "openstack/keystone/admin"}},
		},
	}
	if err := env.Client.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: ns, Name: k.Name}
	poll(t, "the dependencies played", func(ctx context.Context) bool {
		_, _ = testenv.MarkExternalSecretSynced(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: names.AdminPasswordSecretName(k)},
			map[string][]byte{names.AdminPasswordDataKey: []byte("pw")})
		keyOpts := keystone.KeyStepOptions{FieldManager: keystone.FieldManager, OperatorImage: keystone.DefaultOperatorImage}
		_, _ = testenv.MarkExternalSecretEmpty(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: keystone.PasswordRestoreName(k)})
		for _, step := range []*keystone.KeyRepositoryStep{keystone.NewFernetKeysStep(keyOpts), keystone.NewCredentialKeysStep(keyOpts)} {
			_, _ = testenv.MarkExternalSecretEmpty(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: step.RestoreName(k)})
		}
		_, _ = testenv.MarkDatabaseReady(ctx, env.Client, key)
		_, _ = testenv.MarkUserReady(ctx, env.Client, key)
		_, _ = testenv.MarkGrantReady(ctx, env.Client, key)
		if err := env.Client.Get(ctx, key, k); err != nil {
			return false
		}
		for _, c := range []string{keystone.ConditionSecretsReady, keystone.ConditionConfigReady,
			keystone.ConditionFernetKeysReady, keystone.ConditionCredentialKeysReady,
			keystone.ConditionIdentityBackendsReady,
			keystone.ConditionDatabaseReady, keystone.ConditionDeploymentReady} {
			if !reconcile.IsTrue(k, c) {
				return false
			}
		}
		api := meta.FindStatusCondition(k.Status.Conditions, keystone.ConditionKeystoneAPIReady)
		return api != nil && api.Status == metav1.ConditionFalse &&
			(api.Reason == "EndpointNotReady" || api.Reason == "ConnectionFailed" || api.Reason == "HealthCheckTimeout")
	})
	if k.Status.Endpoint != names.Endpoint(k) {
		t.Fatalf("status.endpoint = %q, want %q", k.Status.Endpoint, names.Endpoint(k))
	}
}

// webhookFlags serves the admission webhooks where the API server of env calls them.
func webhookFlags(t *testing.T, f flags) flags {
	wo, ok := env.WebhookServerOptions()
	if !ok {
		t.Fatal("the control plane installed no webhooks")
	}
	if wo.Host != "" && wo.Host != "127.0.0.1" && wo.Host != "localhost" {
		t.Fatalf("webhook host %q: the command listens on every address", wo.Host)
	}
	f.webhookCertDir, f.webhookPort = wo.CertDir, wo.Port
	return f
}

// servesTheWebhooks: with --webhook-cert-dir the command serves the admission webhooks:
// a Keystone whose daily fernet rotation keeps too few keys is refused naming
// spec.fernet.maxActiveKeys, the same Keystone with enough keys is admitted and
// defaulted, and a KeystoneIdentityBackend with a bind password in config is refused.
func servesTheWebhooks(t *testing.T, ns string) {
	ctx := context.Background()
	k := &v1alpha1.Keystone{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unsafe"},
		Spec: v1alpha1.KeystoneSpec{
			Image:     "registry.example/keystone:2025.1",
			Database:  v1alpha1.DatabaseSpec{MariaDBRef: v1alpha1.MariaDBRef{Name: "mariadb"}},
			Bootstrap: v1alpha1.BootstrapSpec{AdminPassword: v1alpha1.RemoteKeySpec{RemoteKey: "openstack/keystone/admin"}},
			Fernet:    v1alpha1.KeyRepositorySpec{MaxActiveKeys: 3, RotationInterval: &metav1.Duration{Duration: 24 * time.Hour}},
		},
	}
	var err error
	poll(t, "the webhook answers", func(ctx context.Context) bool {
		err = env.Client.Create(ctx, k.DeepCopy())
		return err != nil && strings.Contains(err.Error(), "spec.fernet.maxActiveKeys")
	})
	if !strings.Contains(err.Error(), "maxActiveKeys must be at least 5") {
		t.Fatalf("refusal %q does not name the smallest safe maxActiveKeys", err)
	}
	k.Spec.Fernet.MaxActiveKeys = 5
	if err := env.Client.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	if k.Spec.SecretStoreRef == nil || k.Spec.SecretStoreRef.Name != "openbao-cluster-store" {
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
	err = env.Client.Create(ctx, b)
	if err == nil || !strings.Contains(err.Error(), "spec.config[ldap][password]: Forbidden") {
		t.Fatalf("backend with a bind password in config: err = %v, want it refused naming spec.config[ldap][password]", err)
	}
}

// TestFlags checks the webhook flags: no certificate directory and port 9443 by
// default (no webhook served), and both set from the command line.
func TestFlags(t *testing.T) {
	f := defaultFlags()
	fs := flag.NewFlagSet("keystone-operator", flag.ContinueOnError)
	f.bind(fs)
	if f.webhookCertDir != "" || f.webhookPort != 9443 {
		t.Errorf("defaults: webhook cert dir %q, port %d; want none and 9443", f.webhookCertDir, f.webhookPort)
	}
	if err := fs.Parse([]string{"--webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "--webhook-port", "10250"}); err != nil {
		t.Fatal(err)
	}
	if f.webhookCertDir != "/tmp/k8s-webhook-server/serving-certs" || f.webhookPort != 10250 {
		t.Errorf("parsed: webhook cert dir %q, port %d", f.webhookCertDir, f.webhookPort)
	}
}

func poll(t *testing.T, what string, cond func(ctx context.Context) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 90*time.Second, true,
		func(ctx context.Context) (bool, error) { return cond(ctx), nil })
	if err != nil {
		t.Fatalf("%s: not within 90s", what)
	}
}
