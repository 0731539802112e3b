package simulate_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// ExampleSecretBackend plays OpenBao behind External Secrets Operator: an
// ExternalSecret that restores a credential finds nothing before the first push, the
// PushSecret writes the credential, and the next sync brings it back. env is the
// package's *Env, started in TestMain with testenv.Main.
func ExampleSecretBackend() {
	ctx := context.Background()
	ns := exampleNamespace(ctx)
	bao := simulate.NewSecretBackend(env.Client)

	restore := &esov1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Name: "identity-admin", Namespace: ns},
		Spec: esov1.ExternalSecretSpec{
			SecretStoreRef: esov1.SecretStoreRef{Kind: "ClusterSecretStore", Name: "openbao"},
			Target:         esov1.ExternalSecretTarget{DeletionPolicy: esov1.DeletionPolicyDelete},
			Data: []esov1.ExternalSecretData{{SecretKey: "password",
				RemoteRef: esov1.ExternalSecretDataRemoteRef{Key: "identity/admin", Property: "password"}}},
		},
	}
	source := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "identity-admin-source", Namespace: ns},
		Data: map[string][]byte{"password": []byte("s3cr3t")}}
	push := &esov1alpha1.PushSecret{
		ObjectMeta: metav1.ObjectMeta{Name: "identity-admin", Namespace: ns},
		Spec: esov1alpha1.PushSecretSpec{
			SecretStoreRefs: []esov1alpha1.PushSecretStoreRef{{Kind: "ClusterSecretStore", Name: "openbao"}},
			UpdatePolicy:    esov1alpha1.PushSecretUpdatePolicyIfNotExists,
			Selector:        esov1alpha1.PushSecretSelector{Secret: &esov1alpha1.PushSecretSecret{Name: source.Name}},
			Data: []esov1alpha1.PushSecretData{{Match: esov1alpha1.PushSecretMatch{SecretKey: "password",
				RemoteRef: esov1alpha1.PushSecretRemoteRef{RemoteKey: "identity/admin", Property: "password"}}}},
		},
	}
	for _, obj := range []client.Object{restore, source, push} {
		if err := env.Client.Create(ctx, obj); err != nil {
			panic(err)
		}
	}
	ready := func() string {
		es := &esov1.ExternalSecret{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(restore), es); err != nil {
			panic(err)
		}
		return string(es.Status.Conditions[0].Status) + " " + es.Status.Conditions[0].Reason
	}

	if err := bao.Sync(ctx, client.ObjectKeyFromObject(restore)); err != nil {
		panic(err)
	}
	fmt.Println("before the push:", ready())

	if err := bao.Push(ctx, client.ObjectKeyFromObject(push)); err != nil {
		panic(err)
	}
	v, ok := bao.Property("identity/admin", "password")
	fmt.Println("pushed:", v, ok, bao.Writes())

	if err := bao.Sync(ctx, client.ObjectKeyFromObject(restore)); err != nil {
		panic(err)
	}
	restored := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: restore.Name}, restored); err != nil {
		panic(err)
	}
	fmt.Println("after the push:", ready(), string(restored.Data["password"]))

	// IfNotExists: a second push of a new value leaves the backend's alone.
	source.Data["password"] = []byte("other")
	if err := env.Client.Update(ctx, source); err != nil {
		panic(err)
	}
	if err := bao.Push(ctx, client.ObjectKeyFromObject(push)); err != nil {
		panic(err)
	}
	v, _ = bao.Property("identity/admin", "password")
	fmt.Println("pushed again:", v, bao.Writes())
	// Output:
	// before the push: True SecretDeleted
	// pushed: s3cr3t true 1
	// after the push: True SecretSynced s3cr3t
	// pushed again: s3cr3t 1
}
