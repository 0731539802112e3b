package main

import (
	"context"
	"os"
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
	"github.com/c5c3/reconciler-sdk/examples/keystone/controller"
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
	os.Exit(testenv.Main(m, testenv.Options{Scheme: scheme, CRDPaths: []string{"../config/crd/bases"}, Controllers: true}, &env))
}

// The command's run, given only a rest.Config and its flags, reconciles a Keystone of
// its namespace on a real control plane: every step up to the Deployment turns True. The
// health check requests the cluster-local Service URL, which this machine cannot
// resolve or reach, so KeystoneAPIReady stays False for a reason of its table.
func TestRunReconcilesAKeystone(t *testing.T) {
	ns := env.Namespace(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		f := defaultFlags()
		f.MetricsBindAddress, f.HealthProbeBindAddress, f.Namespace = "0", "0", ns
		done <- run(ctx, env.Config, f)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})

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
		_, _ = testenv.MarkExternalSecretSynced(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: controller.AdminPasswordSecretName(k)},
			map[string][]byte{controller.AdminPasswordDataKey: []byte("pw")})
		keyOpts := controller.KeyStepOptions{FieldManager: controller.FieldManager, OperatorImage: controller.DefaultOperatorImage}
		for _, step := range []*controller.KeyRepositoryStep{controller.NewFernetKeysStep(keyOpts), controller.NewCredentialKeysStep(keyOpts)} {
			_, _ = testenv.MarkExternalSecretEmpty(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: step.RestoreName(k)})
		}
		_, _ = testenv.MarkDatabaseReady(ctx, env.Client, key)
		_, _ = testenv.MarkUserReady(ctx, env.Client, key)
		_, _ = testenv.MarkGrantReady(ctx, env.Client, key)
		if err := env.Client.Get(ctx, key, k); err != nil {
			return false
		}
		for _, c := range []string{controller.ConditionSecretsReady, controller.ConditionConfigReady,
			controller.ConditionFernetKeysReady, controller.ConditionCredentialKeysReady,
			controller.ConditionIdentityBackendsReady,
			controller.ConditionDatabaseReady, controller.ConditionDeploymentReady} {
			if !reconcile.IsTrue(k, c) {
				return false
			}
		}
		api := meta.FindStatusCondition(k.Status.Conditions, controller.ConditionKeystoneAPIReady)
		return api != nil && api.Status == metav1.ConditionFalse &&
			(api.Reason == "EndpointNotReady" || api.Reason == "ConnectionFailed" || api.Reason == "HealthCheckTimeout")
	})
	if k.Status.Endpoint != controller.Endpoint(k) {
		t.Fatalf("status.endpoint = %q, want %q", k.Status.Endpoint, controller.Endpoint(k))
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
