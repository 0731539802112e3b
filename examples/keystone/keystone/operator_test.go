package keystone_test

import (
	"context"
	"testing"
	"time"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// operator is a Keystone operator running against a management cluster, as cmd/main.go
// runs it.
type operator struct {
	rec *keystone.Reconciler
	// api is the stand-in for the identity API that the health check probes.
	api *testenv.StandIn
}

// operatorOptions vary how startOperator runs the operator.
type operatorOptions struct {
	// cfg reaches the management cluster; nil means env.Config (cluster admin).
	cfg *rest.Config
	// namespaceScoped runs the operator as with --namespace=<the test's namespace>.
	namespaceScoped bool
}

// versionDocument is Keystone's /v3, what the stand-in the health check probes answers
// by default; v2Document is the version document of v2.0.
var (
	versionDocument = testenv.Answer{ContentType: "application/json", Body: `{"version": {"id": "v3.14", "status": "stable", "links": []}}`}
	v2Document      = testenv.Answer{ContentType: "application/json", Body: `{"version": {"id": "v2.0", "status": "deprecated"}}`}
)

// operatorImage is the image the tests' operator runs: the rotation CronJobs run it.
const operatorImage = "registry.example/keystone-operator:test"

// defaultOptions are keystone.DefaultOptions with OperatorImage set to operatorImage, as
// the command sets it from --operator-image.
func defaultOptions() keystone.Options {
	opts := keystone.DefaultOptions()
	opts.OperatorImage = operatorImage
	return opts
}

// startOperator runs the Keystone operator for namespace ns (its cache sees ns and the
// clusters namespace only) until the test ends, with the health check pointed at a
// version-document stand-in.
func startOperator(t *testing.T, ns string, o operatorOptions) *operator {
	t.Helper()
	api := testenv.NewStandIn(t, versionDocument)
	opts := testenv.OperatorOptions{Config: o.cfg}
	opts.FieldManager, opts.Namespace, opts.ClustersNamespace = keystone.FieldManager, ns, env.Namespace(t)
	opts.Resolver.ReachabilityTTL = time.Second
	rec, _ := testenv.StartReconciler(t, env, opts, func(resolver *multicluster.ClusterResolver) (*keystone.Reconciler, error) {
		ropts := defaultOptions()
		ropts.NamespaceScoped = o.namespaceScoped
		ropts.Outbound, ropts.ProbeBase = api.Outbound(), api.URL("")
		return keystone.NewReconciler(resolver, ropts)
	})
	return &operator{rec: rec, api: api}
}

// newStepReconciler builds the Keystone reconciler on env as cmd does, with opts, but
// does not start its manager (testenv's StepResolver): the test drives single steps
// through keystone.RunStep.
func newStepReconciler(t *testing.T, opts keystone.Options) *keystone.Reconciler {
	return testenv.StepReconciler(t, env, keystone.FieldManager, func(resolver *multicluster.ClusterResolver) (*keystone.Reconciler, error) {
		return keystone.NewReconciler(resolver, opts)
	})
}

// stepTarget is the management cluster as a pass writes to it, an Applier under the
// operator's field manager, over c (env.Client or a wrapper of it).
func stepTarget(c client.Client) *multicluster.Target {
	return testenv.StepTarget(c, keystone.FieldManager)
}

// simulatedJobs creates every Job as a simulate.SimulatedJob, so that the real Job
// controller leaves it to MarkJobComplete and MarkJobFailed.
type simulatedJobs struct{ client.Client }

// Create creates obj, a Job marked as simulated.
func (c simulatedJobs) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if j, ok := obj.(*batchv1.Job); ok {
		simulate.SimulatedJob(j)
	}
	return c.Client.Create(ctx, obj, opts...)
}

// newKeystone returns a minimal Keystone named name in ns, on the MariaDB "mariadb" of
// ns.
func newKeystone(ns, name string) *v1alpha1.Keystone {
	return &v1alpha1.Keystone{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.KeystoneSpec{
			Image:     "registry.example/keystone:2025.1",
			Database:  v1alpha1.DatabaseSpec{MariaDBRef: v1alpha1.MariaDBRef{Name: "mariadb"}},
			Bootstrap: v1alpha1.BootstrapSpec{AdminPassword: v1alpha1.RemoteKeySpec{RemoteKey: "openstack/keystone/admin"}},
		},
	}
}

// createKeystone creates k on env and reads it back, defaults and UID included.
func createKeystone(t *testing.T, k *v1alpha1.Keystone) *v1alpha1.Keystone {
	t.Helper()
	if err := env.Client.Create(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	return k
}

// storeReady marks the shared ClusterSecretStore openbao-cluster-store Ready, creating
// it when missing.
func storeReady(t *testing.T) {
	t.Helper()
	if _, err := simulate.EnsureClusterSecretStoreReady(context.Background(), env.Client, secrets.OpenBaoClusterStoreName); err != nil {
		t.Fatal(err)
	}
}

// mariaDBReady creates the MariaDB "mariadb" in ns and marks it Ready.
func mariaDBReady(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Create(ctx, &mariadbv1alpha1.MariaDB{ObjectMeta: metav1.ObjectMeta{Name: "mariadb", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	if _, err := simulate.MarkMariaDBReady(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: "mariadb"}); err != nil {
		t.Fatal(err)
	}
}

// syncAdminPassword plays ESO: it writes password into the admin password Secret of k
// once its ExternalSecret exists, and marks the ExternalSecret synced.
func syncAdminPassword(t *testing.T, k *v1alpha1.Keystone, password string) {
	t.Helper()
	key := client.ObjectKey{Namespace: k.Namespace, Name: names.AdminPasswordSecretName(k)}
	testenv.Eventually(t, 30*time.Second, "ExternalSecret "+key.String()+" synced", func(ctx context.Context) (bool, error) {
		_, err := simulate.MarkExternalSecretSynced(ctx, env.Client, key,
			map[string][]byte{names.AdminPasswordDataKey: []byte(password)})
		return err == nil, err
	})
}

// provisionDatabase plays mariadb-operator for k: it marks the Database, the User and
// the Grant Ready as each appears.
func provisionDatabase(t *testing.T, k *v1alpha1.Keystone) {
	t.Helper()
	key := client.ObjectKey{Namespace: k.Namespace, Name: k.Name}
	for _, mark := range []struct {
		kind string
		fn   func(context.Context, client.Client, client.ObjectKey) error
	}{
		{"Database", func(ctx context.Context, c client.Client, key client.ObjectKey) error {
			_, err := simulate.MarkDatabaseReady(ctx, c, key)
			return err
		}},
		{"User", func(ctx context.Context, c client.Client, key client.ObjectKey) error {
			_, err := simulate.MarkUserReady(ctx, c, key)
			return err
		}},
		{"Grant", func(ctx context.Context, c client.Client, key client.ObjectKey) error {
			_, err := simulate.MarkGrantReady(ctx, c, key)
			return err
		}},
	} {
		testenv.Eventually(t, 60*time.Second, mark.kind+" "+key.String()+" marked Ready", func(ctx context.Context) (bool, error) {
			err := mark.fn(ctx, env.Client, key)
			return err == nil, err
		})
	}
}

// converge plays every operator a minimal Keystone k depends on, with admin password
// password, and waits for k to be Ready.
func converge(t *testing.T, k *v1alpha1.Keystone, password string) {
	t.Helper()
	storeReady(t)
	mariaDBReady(t, k.Namespace)
	syncAdminPassword(t, k, password)
	noKeyBackups(t, k)
	provisionDatabase(t, k)
	waitReady(t, k)
}

// noKeyBackups plays ESO for a first install: the restore ExternalSecrets of the
// database password and of both key repositories find no backup in the secret backend,
// so the password and the repositories are generated.
func noKeyBackups(t *testing.T, k *v1alpha1.Keystone) {
	t.Helper()
	opts := keystone.KeyStepOptions{FieldManager: keystone.FieldManager, OperatorImage: operatorImage}
	restores := []string{keystone.PasswordRestoreName(k)}
	for _, step := range []*keystone.KeyRepositoryStep{keystone.NewFernetKeysStep(opts), keystone.NewCredentialKeysStep(opts)} {
		restores = append(restores, step.RestoreName(k))
	}
	for _, name := range restores {
		key := client.ObjectKey{Namespace: k.Namespace, Name: name}
		testenv.Eventually(t, 60*time.Second, "ExternalSecret "+key.String()+" answered", func(ctx context.Context) (bool, error) {
			_, err := simulate.MarkExternalSecretEmpty(ctx, env.Client, key)
			return err == nil, err
		})
	}
}

// waitReady waits until k is Ready=True for its current generation.
func waitReady(t *testing.T, k *v1alpha1.Keystone) {
	t.Helper()
	testenv.ExpectCondition(t, env.Client, k, reconcile.ConditionReady, metav1.ConditionTrue)
}

// get reads obj back from env.
func get(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
}

// update changes k on env, retrying on conflicts, and returns the stored Keystone.
func update(t *testing.T, k *v1alpha1.Keystone, change func(*v1alpha1.Keystone)) *v1alpha1.Keystone {
	t.Helper()
	got := &v1alpha1.Keystone{}
	testenv.Eventually(t, 10*time.Second, "update Keystone", func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(k), got); err != nil {
			return false, err
		}
		change(got)
		err := env.Client.Update(ctx, got)
		return err == nil, err
	})
	return got
}
