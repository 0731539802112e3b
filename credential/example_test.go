package credential_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/credential"
)

// ExampleEnsure creates a token Secret once, keeps it on the next call, and, once
// someone deleted it while a Deployment still uses the token, creates it again with a
// new token and says so in a Warning Event.
func ExampleEnsure() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	ctx := context.Background()
	c, scheme := env.Client, env.Scheme
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := c.Create(ctx, ns); err != nil {
		panic(err)
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns.Name}}
	if err := c.Create(ctx, owner); err != nil {
		panic(err)
	}
	events := &eventLog{}
	key := client.ObjectKey{Namespace: ns.Name, Name: "app-token"}
	spec := credential.Secret{
		Key: key, DataKey: "token", Recorder: events,
		InUse: func(ctx context.Context) (string, error) { return "Deployment app mounts it", nil },
	}
	first := credential.Secret{Key: key, DataKey: "token", Recorder: events} // a first install: nothing uses it yet

	res, err := credential.Ensure(ctx, c, scheme, owner, first)
	fmt.Println(res.Outcome, err)
	res, err = credential.Ensure(ctx, c, scheme, owner, spec)
	fmt.Println(res.Outcome, err)
	if err := c.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}); err != nil {
		panic(err)
	}
	res, err = credential.Ensure(ctx, c, scheme, owner, spec)
	fmt.Println(res.Outcome, err)
	for _, e := range events.all() {
		fmt.Println(e.Type, e.Reason)
	}
	// Output:
	// Generated <nil>
	// Existing <nil>
	// Regenerated <nil>
	// Normal CredentialGenerated
	// Warning CredentialRegenerated
}
