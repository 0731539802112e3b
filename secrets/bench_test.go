package secrets_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// BenchmarkGateStoreReady reports the API requests one gate costs: one GET for a
// store, none for the namespace-scoped refusal.
func BenchmarkGateStoreReady(b *testing.B) {
	ctx := context.Background()
	ns := env.Namespace(b)
	name := clusterName("bench")
	createClusterStore(b, name, true)
	createStore(b, ns, "down", false)
	cases := map[string]struct {
		ref             commonv1.SecretStoreRefSpec
		namespaceScoped bool
	}{
		"ready ClusterSecretStore": {ref: commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: name}},
		"SecretStore not ready":    {ref: commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "down"}},
		"namespace-scoped refusal": {ref: commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: name}, namespaceScoped: true},
	}
	for caseName, tc := range cases {
		b.Run(caseName, func(b *testing.B) {
			c, counter, err := env.CountingClient()
			if err != nil {
				b.Fatal(err)
			}
			var conds []metav1.Condition
			if _, err := secrets.GateStoreReady(ctx, c, tc.ref, ns, tc.namespaceScoped, &conds, 1, "SecretsReady"); err != nil {
				b.Fatal(err)
			}
			counter.Reset()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := secrets.GateStoreReady(ctx, c, tc.ref, ns, tc.namespaceScoped, &conds, 1, "SecretsReady"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
		})
	}
}

// BenchmarkEnsurePushSecretConverged measures a steady-state pass: one apply request,
// no change on the server.
func BenchmarkEnsurePushSecretConverged(b *testing.B) {
	ctx := context.Background()
	ns := env.Namespace(b)
	owner := newOwner(b, ns)
	c, counter, err := env.CountingClient()
	if err != nil {
		b.Fatal(err)
	}
	ref := secrets.EffectiveStoreRef(nil)
	if err := secrets.EnsurePushSecret(ctx, c, env.Scheme, owner, desiredPushSecret(ns, "identity-admin", ref)); err != nil {
		b.Fatal(err)
	}
	counter.Reset()
	b.ReportAllocs()
	for b.Loop() {
		if err := secrets.EnsurePushSecret(ctx, c, env.Scheme, owner, desiredPushSecret(ns, "identity-admin", ref)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
}

// BenchmarkEnsureGeneratedSecretKept measures a steady-state pass: one GET, no write.
func BenchmarkEnsureGeneratedSecretKept(b *testing.B) {
	ctx := context.Background()
	ns := env.Namespace(b)
	c, counter, err := env.CountingClient()
	if err != nil {
		b.Fatal(err)
	}
	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "bench"}, "password")
	if _, err := secrets.EnsureGeneratedSecret(ctx, c, env.Scheme, nil, gs); err != nil {
		b.Fatal(err)
	}
	counter.Reset()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := secrets.EnsureGeneratedSecret(ctx, c, env.Scheme, nil, gs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
	b.ReportMetric(float64(counter.Writes())/float64(b.N), "writes/op")
}

// BenchmarkStoreRefFanOut maps one SecretStore event over a namespace of n CRs (a
// cached reader in a manager; the fake client here), a tenth of which select the store.
func BenchmarkStoreRefFanOut(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			objs := make([]client.Object, 0, n)
			for i := range n {
				store := "other"
				if i%10 == 0 {
					store = "tenant-bao"
				}
				objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: fmt.Sprintf("cr-%04d", i),
					Annotations: map[string]string{annStoreKind: "SecretStore", annStoreName: store}}})
			}
			mapFunc := configMapFanOut(fake.NewClientBuilder().WithObjects(objs...).Build(), commonv1.SecretStoreKind)
			store := &esov1.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "tenant-bao"}}
			b.ReportAllocs()
			for b.Loop() {
				if got := mapFunc(context.Background(), store); len(got) != n/10 {
					b.Fatalf("%d requests, want %d", len(got), n/10)
				}
			}
		})
	}
}

func BenchmarkEffectiveStoreRef(b *testing.B) {
	ref := &commonv1.SecretStoreRefSpec{Name: "vault-eu"}
	b.ReportAllocs()
	for b.Loop() {
		_ = secrets.EffectiveStoreRef(ref)
	}
}
