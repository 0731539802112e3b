package database_test

import (
	"context"
	"os"
	"testing"
	"time"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// waitTimeout bounds every wait for a real controller; the margin is for a loaded
// machine (the controllers usually act within seconds).
const waitTimeout = 90 * time.Second

var env *testenv.Env

// The package runs on real controllers so that db-sync Jobs complete for real (Job
// controller and kwok pods); mariadb-operator is simulated with the testenv simulators.
// The App CRD (testdata/crd) is the custom resource of the conformance test's operator;
// the ExternalSecret CRD serves the restore of a password Secret from the secret store.
func TestMain(m *testing.M) {
	var crds []testenv.CRDSource
	for _, src := range testenv.DefaultCRDs() {
		if src.Module == testenv.MariaDBOperatorModule {
			crds = append(crds, src)
		}
	}
	// ExternalSecrets, for the restore of a password Secret from the secret store.
	crds = append(crds, testenv.CRDSource{Module: testenv.ESOModule, Version: testenv.ESOVersion,
		Files: []string{"config/crds/bases/external-secrets.io_externalsecrets.yaml"}})
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{addAppToScheme},
		CRDSources: crds, CRDPaths: []string{"testdata/crd"}, Controllers: true}, &env))
}

// newOwner creates a persisted ConfigMap in ns standing in for the custom resource.
func newOwner(t testing.TB, ns string) *corev1.ConfigMap {
	t.Helper()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "identity", Namespace: ns}}
	if err := env.Client.Create(context.Background(), owner); err != nil {
		t.Fatalf("create owner: %v", err)
	}
	return owner
}

// newMariaDB creates the MariaDB server "mariadb" in ns, without status.
func newMariaDB(t testing.TB, ns string) client.ObjectKey {
	t.Helper()
	if err := createMariaDB(context.Background(), ns); err != nil {
		t.Fatalf("create MariaDB: %v", err)
	}
	return client.ObjectKey{Namespace: ns, Name: "mariadb"}
}

func createMariaDB(ctx context.Context, ns string) error {
	return env.Client.Create(ctx, &mariadbv1alpha1.MariaDB{
		ObjectMeta: metav1.ObjectMeta{Name: "mariadb", Namespace: ns},
	})
}

// desiredDatabase, desiredUser and desiredGrant build the objects an identity service's operator
// would, leaving server-defaulted fields unset.
func desiredDatabase(ns string) *mariadbv1alpha1.Database {
	return &mariadbv1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: "identity", Namespace: ns},
		Spec: mariadbv1alpha1.DatabaseSpec{
			MariaDBRef: mariadbv1alpha1.MariaDBRef{
				ObjectReference: mariadbv1alpha1.ObjectReference{Name: "mariadb"}, WaitForIt: true,
			},
		},
	}
}

func desiredUser(ns string) *mariadbv1alpha1.User {
	return &mariadbv1alpha1.User{
		ObjectMeta: metav1.ObjectMeta{Name: "identity", Namespace: ns},
		Spec: mariadbv1alpha1.UserSpec{
			MariaDBRef: mariadbv1alpha1.MariaDBRef{
				ObjectReference: mariadbv1alpha1.ObjectReference{Name: "mariadb"}, WaitForIt: true,
			},
			PasswordSecretKeyRef: &mariadbv1alpha1.SecretKeySelector{
				LocalObjectReference: mariadbv1alpha1.LocalObjectReference{Name: "identity-db-password"},
				Key:                  "password",
			},
			Host: "%",
		},
	}
}

func desiredGrant(ns string) *mariadbv1alpha1.Grant {
	return &mariadbv1alpha1.Grant{
		ObjectMeta: metav1.ObjectMeta{Name: "identity", Namespace: ns},
		Spec: mariadbv1alpha1.GrantSpec{
			MariaDBRef: mariadbv1alpha1.MariaDBRef{
				ObjectReference: mariadbv1alpha1.ObjectReference{Name: "mariadb"}, WaitForIt: true,
			},
			Privileges: []string{"ALL PRIVILEGES"},
			Database:   "identity",
			Username:   "identity",
			Host:       new("%"),
		},
	}
}

// key returns obj's key.
func key(obj client.Object) client.ObjectKey { return client.ObjectKeyFromObject(obj) }

// need returns a function that fails the test on a non-nil error; it keeps simulator
// calls on one line: need(t)(simulate.MarkUserReady(ctx, c, key)).
func need(t testing.TB) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// eventually polls cond until it returns true, failing the test after waitTimeout with
// what and the last state cond described.
func eventually(t testing.TB, what string, cond func(ctx context.Context) (done bool, state string, err error)) {
	t.Helper()
	var state string
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, waitTimeout, true,
		func(ctx context.Context) (bool, error) {
			done, s, err := cond(ctx)
			state, last = s, err
			return done && err == nil, nil
		})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s; last state: %s; last error: %v", waitTimeout, what, state, last)
	}
}
