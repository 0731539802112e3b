package database_test

import (
	"context"
	"fmt"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// exampleNamespace creates a namespace and an owner in it for an example; in a
// reconciler the owner is the custom resource being reconciled.
func exampleNamespace(ctx context.Context) (string, *corev1.ConfigMap) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		panic(err)
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "identity", Namespace: ns.Name}}
	if err := env.Client.Create(ctx, owner); err != nil {
		panic(err)
	}
	return ns.Name, owner
}

// ExampleEnsureDatabase applies a Database and reads its readiness from the apply
// response; mariadb-operator (here its simulator) then reports it Ready.
func ExampleEnsureDatabase() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	ctx := context.Background()
	c, scheme := env.Client, env.Scheme
	ns, owner := exampleNamespace(ctx)

	desired := func() *mariadbv1alpha1.Database {
		return &mariadbv1alpha1.Database{
			ObjectMeta: metav1.ObjectMeta{Name: "identity", Namespace: ns},
			Spec: mariadbv1alpha1.DatabaseSpec{MariaDBRef: mariadbv1alpha1.MariaDBRef{
				ObjectReference: mariadbv1alpha1.ObjectReference{Name: "mariadb"}, WaitForIt: true,
			}},
		}
	}
	db := desired()
	ready, err := database.EnsureDatabase(ctx, c, scheme, owner, db)
	fmt.Println("ready:", ready, err, "characterSet:", db.Spec.CharacterSet)

	if _, err := simulate.MarkDatabaseReady(ctx, c, client.ObjectKeyFromObject(db)); err != nil {
		panic(err)
	}
	again := desired()
	ready, err = database.EnsureDatabase(ctx, c, scheme, owner, again)
	fmt.Println("ready:", ready, err, "rewritten:", again.Generation != db.Generation)
	// Output:
	// ready: false <nil> characterSet: utf8
	// ready: true <nil> rewritten: false
}

// ExampleReconcileProvision walks the provisioning flow from an absent server to a
// provisioned database, one pass at a time, with the simulators standing in for
// mariadb-operator; then the password Secret is deleted, and the next pass creates it
// again with a new password, reported as a Warning Event (it names the Secret and the
// User, never the password).
func ExampleReconcileProvision() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	ctx := context.Background()
	c, scheme := env.Client, env.Scheme
	ns, owner := exampleNamespace(ctx)
	ref := mariadbv1alpha1.MariaDBRef{ObjectReference: mariadbv1alpha1.ObjectReference{Name: "mariadb"}, WaitForIt: true}
	recorder := &eventLog{}

	// Build the desired objects from scratch on every pass.
	params := func() database.ProvisionParams {
		return database.ProvisionParams{
			Database: &mariadbv1alpha1.Database{
				ObjectMeta: metav1.ObjectMeta{Name: "identity"},
				Spec:       mariadbv1alpha1.DatabaseSpec{MariaDBRef: ref},
			},
			User: &mariadbv1alpha1.User{
				ObjectMeta: metav1.ObjectMeta{Name: "identity"},
				Spec: mariadbv1alpha1.UserSpec{MariaDBRef: ref, Host: "%",
					PasswordSecretKeyRef: &mariadbv1alpha1.SecretKeySelector{
						LocalObjectReference: mariadbv1alpha1.LocalObjectReference{Name: "identity-db-password"},
						Key:                  "password",
					}},
			},
			Grant: &mariadbv1alpha1.Grant{
				ObjectMeta: metav1.ObjectMeta{Name: "identity"},
				Spec:       mariadbv1alpha1.GrantSpec{MariaDBRef: ref, Privileges: []string{"ALL PRIVILEGES"}, Host: new("%")},
			},
			GeneratePassword: true,
			Recorder:         recorder, // in a reconciler: mgr.GetEventRecorder(name)
		}
	}
	pass := func() {
		cond, res, err := database.ReconcileProvision(ctx, c, scheme, owner, params())
		fmt.Println(cond.Status, cond.Reason, res.RequeueAfter, err)
	}
	key := client.ObjectKey{Namespace: ns, Name: "identity"}
	server := client.ObjectKey{Namespace: ns, Name: "mariadb"}

	pass()
	if err := c.Create(ctx, &mariadbv1alpha1.MariaDB{ObjectMeta: metav1.ObjectMeta{Name: server.Name, Namespace: ns}}); err != nil {
		panic(err)
	}
	pass()
	if _, err := simulate.MarkMariaDBReady(ctx, c, server); err != nil {
		panic(err)
	}
	pass()
	if _, err := simulate.MarkDatabaseReady(ctx, c, key); err != nil {
		panic(err)
	}
	pass()
	if _, err := simulate.MarkUserReady(ctx, c, key); err != nil {
		panic(err)
	}
	pass()
	if _, err := simulate.MarkGrantReady(ctx, c, key); err != nil {
		panic(err)
	}
	pass()

	// Someone deletes the password Secret; no backup holds the password (no Restore).
	// The next pass creates it again with a new password, and says so.
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "identity-db-password", Namespace: ns}}
	if err := c.Delete(ctx, secret); err != nil {
		panic(err)
	}
	pass()
	for _, e := range recorder.all() {
		fmt.Println(e.Type, e.Reason, e.Regarding)
	}
	// Output:
	// False MariaDBNotFound 10s <nil>
	// False MariaDBNotReady 10s <nil>
	// False DatabaseNotReady 10s <nil>
	// False DatabaseUserNotReady 10s <nil>
	// False DatabaseGrantNotReady 10s <nil>
	// True DatabaseProvisioned 0s <nil>
	// True DatabaseProvisioned 0s <nil>
	// Normal CredentialGenerated ConfigMap identity
	// Warning CredentialRegenerated ConfigMap identity
}

// ExampleConnectionURL renders the [database] connection URL of a PyMySQL client: the
// password is percent-encoded, the CA path query-encoded; bad input names the field and
// never the password.
func ExampleConnectionURL() {
	conn := database.Connection{Host: "mariadb.db.svc", Name: "placement", User: "placement", CAFile: "/etc/db-tls/ca.crt"}
	u, err := database.ConnectionURL(conn, "p@ss/w$rd")
	fmt.Println(u, err)

	conn.Port = 99999
	_, err = database.ConnectionURL(conn, "p@ss/w$rd")
	fmt.Println(err)
	// Output:
	// mysql+pymysql://placement:p%40ss%2Fw%24rd@mariadb.db.svc:3306/placement?ssl_ca=%2Fetc%2Fdb-tls%2Fca.crt <nil>
	// invalid database parameters: connection: Port 99999 is not a TCP port (1 to 65535)
}
