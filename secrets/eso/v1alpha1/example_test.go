package v1alpha1_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/apply"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
)

// ExamplePushSecret applies a PushSecret that writes a generated Fernet key back to
// OpenBao. The builder leaves updatePolicy and refreshInterval to the server's
// defaults.
func ExamplePushSecret() {
	ctx := context.Background()
	c, scheme := env.Client, env.Scheme

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := c.Create(ctx, ns); err != nil {
		panic(err)
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "identity", Namespace: ns.Name}}
	if err := c.Create(ctx, owner); err != nil {
		panic(err)
	}

	ps := &esov1alpha1.PushSecret{
		ObjectMeta: metav1.ObjectMeta{Name: "identity-fernet", Namespace: ns.Name},
		Spec: esov1alpha1.PushSecretSpec{
			SecretStoreRefs: []esov1alpha1.PushSecretStoreRef{{Kind: "ClusterSecretStore", Name: "openbao-cluster-store"}},
			Selector:        esov1alpha1.PushSecretSelector{Secret: &esov1alpha1.PushSecretSecret{Name: "identity-fernet-keys"}},
			Data: []esov1alpha1.PushSecretData{{Match: esov1alpha1.PushSecretMatch{
				SecretKey: "0",
				RemoteRef: esov1alpha1.PushSecretRemoteRef{RemoteKey: "kv/identity/fernet", Property: "0"},
			}}},
		},
	}
	if err := apply.EnsureObject(ctx, c, scheme, owner, ps, apply.FieldManager); err != nil {
		panic(err)
	}
	fmt.Println("updatePolicy:", ps.Spec.UpdatePolicy)
	fmt.Println("refreshInterval:", ps.Spec.RefreshInterval.Duration)
	fmt.Println("controller:", metav1.GetControllerOf(ps).Name)
	// Output:
	// updatePolicy: Replace
	// refreshInterval: 1h0m0s
	// controller: identity
}
