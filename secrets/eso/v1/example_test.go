package v1_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// ExampleExternalSecret applies an ExternalSecret that syncs a database password from
// the shared ClusterSecretStore, then reads its Ready condition the way a readiness
// gate does. Here the test control plane's status write stands in for ESO.
func ExampleExternalSecret() {
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

	es := &esov1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Name: "identity-db", Namespace: ns.Name},
		Spec: esov1.ExternalSecretSpec{
			SecretStoreRef: esov1.SecretStoreRef{Kind: esov1.ClusterSecretStoreKind, Name: "openbao-cluster-store"},
			Target:         esov1.ExternalSecretTarget{Name: "identity-db-password"},
			Data: []esov1.ExternalSecretData{{
				SecretKey: "password",
				RemoteRef: esov1.ExternalSecretDataRemoteRef{Key: "kv/identity/db", Property: "password"},
			}},
		},
	}
	if err := apply.EnsureObject(ctx, c, scheme, owner, es, apply.FieldManager); err != nil {
		panic(err)
	}
	// The server filled in the defaults of the fields the builder left out.
	fmt.Println("creationPolicy:", es.Spec.Target.CreationPolicy)
	fmt.Println("refreshInterval:", es.Spec.RefreshInterval.Duration)

	// ESO reports the sync through the status subresource.
	es.Status.Conditions = []esov1.ExternalSecretStatusCondition{{
		Type: esov1.ExternalSecretReady, Status: corev1.ConditionTrue,
		Reason: esov1.ConditionReasonSecretSynced, LastTransitionTime: metav1.Now(),
	}}
	if err := c.Status().Update(ctx, es); err != nil {
		panic(err)
	}

	got := &esov1.ExternalSecret{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(es), got); err != nil {
		panic(err)
	}
	for _, cond := range got.Status.Conditions {
		if cond.Type == esov1.ExternalSecretReady {
			fmt.Println("ready:", cond.Status == corev1.ConditionTrue, cond.Reason)
		}
	}
	// Output:
	// creationPolicy: Owner
	// refreshInterval: 1h0m0s
	// ready: true SecretSynced
}
