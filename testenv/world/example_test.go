package world_test

import (
	"context"
	"fmt"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
	"github.com/c5c3/reconciler-sdk/testenv/world"
)

// ExampleWorld_Play plays what an operator waits for: the ExternalSecret of its admin
// password is synced from the backend and its Database is Ready. A second Play writes
// nothing. env is the package's *testenv.Env, started in TestMain with testenv.Main;
// app stands for the custom resource (only its namespace counts).
func ExampleWorld_Play() {
	ctx := context.Background()
	ns := exampleNamespace(ctx)
	app := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns}}
	admin := &esov1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Name: "app-admin", Namespace: ns},
		Spec: esov1.ExternalSecretSpec{
			SecretStoreRef: esov1.SecretStoreRef{Kind: "ClusterSecretStore", Name: world.DefaultClusterSecretStore},
			Data: []esov1.ExternalSecretData{{SecretKey: "password",
				RemoteRef: esov1.ExternalSecretDataRemoteRef{Key: "app/admin", Property: "password"}}},
		},
	}
	db := &mariadbv1alpha1.Database{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: mariadbv1alpha1.DatabaseSpec{MariaDBRef: mariadbv1alpha1.MariaDBRef{
			ObjectReference: mariadbv1alpha1.ObjectReference{Name: "mariadb"}}}}
	for _, obj := range []client.Object{admin, db} {
		if err := env.Client.Create(ctx, obj); err != nil {
			panic(err)
		}
	}

	w := world.New(env.Client, world.WithMariaDB("mariadb"),
		world.WithSecret("app/admin", map[string][]byte{"password": []byte("s3cr3t")}))
	if err := w.Play(ctx, env.Client, app); err != nil {
		panic(err)
	}
	secret := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-admin"}, secret); err != nil {
		panic(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(db), db); err != nil {
		panic(err)
	}
	fmt.Println("password synced:", string(secret.Data["password"]))
	fmt.Println("database:", db.Status.Conditions[0].Type, db.Status.Conditions[0].Status)

	inj := faults.NewInjector()
	if err := w.Play(ctx, inj.Client(env.Client), app); err != nil {
		panic(err)
	}
	fmt.Println("writes of the second Play:", inj.Calls(faults.VerbCreate)+inj.Calls(faults.VerbUpdate)+inj.Calls(faults.VerbStatusUpdate))
	// Output:
	// password synced: s3cr3t
	// database: Ready True
	// writes of the second Play: 0
}
