package simulate_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// EnsureClusterSecretStoreReady creates a missing store with the OpenBao provider and
// marks it Ready; on an existing one it only marks it Ready again.
func TestEnsureClusterSecretStoreReady(t *testing.T) {
	ctx := context.Background()
	name := "ensure-" + env.Namespace(t)
	t.Cleanup(func() {
		_ = env.Client.Delete(ctx, &esov1.ClusterSecretStore{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	if _, err := simulate.MarkClusterSecretStoreNotReady(ctx, env.Client, name, "InvalidProviderConfig"); err == nil {
		t.Fatal("MarkClusterSecretStoreNotReady of a missing store succeeded")
	}
	for i := range 2 {
		store, err := simulate.EnsureClusterSecretStoreReady(ctx, env.Client, name)
		if err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		got := &esov1.ClusterSecretStore{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
			t.Fatal(err)
		}
		var stored, want map[string]any
		if err := json.Unmarshal(got.Spec.Provider.Raw, &stored); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(simulate.OpenBaoProvider().Raw, &want); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, stored); d != "" {
			t.Errorf("call %d: provider (-OpenBao +stored):\n%s", i+1, d)
		}
		ready := false
		for _, c := range store.Status.Conditions {
			ready = ready || c.Type == esov1.SecretStoreReady && c.Status == corev1.ConditionTrue
		}
		if !ready {
			t.Errorf("call %d: conditions %+v, want Ready=True", i+1, store.Status.Conditions)
		}
		if _, err := simulate.MarkClusterSecretStoreNotReady(ctx, env.Client, name, "InvalidProviderConfig"); err != nil {
			t.Fatal(err)
		}
	}
}
