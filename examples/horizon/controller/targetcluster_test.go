package controller_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
	"github.com/c5c3/reconciler-sdk/testenv/world"
)

// startTarget starts a control plane of its own for a target cluster (the upstream
// CRDs, no controllers) and stops it when the test ends.
func startTarget(t *testing.T) *testenv.Env {
	t.Helper()
	target, err := testenv.Start(testenv.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := target.Stop(); err != nil {
			t.Errorf("stop target cluster: %v", err)
		}
	})
	return target
}

// A Horizon with spec.targetClusterRef writes its children to that cluster, claimed by
// labels, and nothing to the management cluster; its gates read the target's store,
// ExternalSecret and Deployment; it carries the target's finalizer, and deleting it
// sweeps the target before the finalizer goes.
func TestTargetCluster(t *testing.T) {
	target := startTarget(t) // stopped after the operator: cleanups run last first
	ns := env.Namespace(t)
	op := startOperator(t, ns, operatorOptions{})
	target.RegisterTarget(t, env, op.clustersNS, "edge", ns)
	ctx := context.Background()
	if err := target.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	store := &esov1.ClusterSecretStore{
		ObjectMeta: metav1.ObjectMeta{Name: secrets.OpenBaoClusterStoreName},
		Spec:       esov1.SecretStoreSpec{Provider: simulate.OpenBaoProvider()},
	}
	if err := target.Client.Create(ctx, store); err != nil {
		t.Fatal(err)
	}
	// The management cluster's store is not the one that counts: make it not ready, so
	// a gate that read it would hold the Horizon.
	storeReady(t)
	if _, err := simulate.MarkClusterSecretStoreNotReady(ctx, env.Client, secrets.OpenBaoClusterStoreName, "InvalidProviderConfig"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { storeReady(t) }) // the shared store, as the other tests expect it

	h := newHorizon(ns, "remote")
	h.Spec.TargetClusterRef = &commonv1.TargetClusterRefSpec{Name: "edge"}
	if err := env.Client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}

	// The target resolves and the store gate holds: no store is ready yet. Once the
	// target's is, the Horizon goes on although the management cluster's is not.
	testenv.Eventually(t, 30*time.Second, "SecretsReady False with SecretStoreNotReady", func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, clientKey(h), h); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(h.Status.Conditions, controller.ConditionSecretsReady)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == secrets.ReasonSecretStoreNotReady, nil
	})
	if _, err := simulate.MarkClusterSecretStoreReady(ctx, target.Client, secrets.OpenBaoClusterStoreName); err != nil {
		t.Fatal(err)
	}
	esKey := client.ObjectKey{Namespace: ns, Name: controller.SecretKeyName(h)}
	key := client.ObjectKey{Namespace: ns, Name: h.Name}
	// ESO and the Deployment controller on the target, which runs no controllers.
	waitReady(t, h, newWorld(target.Client, "edge-key", world.Playing(world.ExternalSecrets, world.Deployments)))
	if err := env.Client.Get(ctx, clientKey(h), h); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(h.Finalizers, multicluster.FinalizerFor("edge")) {
		t.Fatalf("finalizers = %v, want %s", h.Finalizers, multicluster.FinalizerFor("edge"))
	}

	mgmtID, err := multicluster.ManagementClusterID(ctx, env.Client)
	if err != nil {
		t.Fatal(err)
	}
	children := func() ([]client.Object, []client.ObjectKey) {
		return []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{},
				&esov1.ExternalSecret{}, &corev1.ConfigMap{}},
			[]client.ObjectKey{key, key, key, esKey, {Namespace: ns, Name: h.Status.ConfigMap}}
	}
	objs, keys := children()
	for i, obj := range objs {
		if err := target.Client.Get(ctx, keys[i], obj); err != nil {
			t.Fatalf("%T %s on the target: %v", obj, keys[i], err)
		}
		claim, ok := apply.ClaimOf(obj)
		if !ok || claim.ManagementCluster != mgmtID || claim.Namespace != ns || claim.Name != h.Name ||
			claim.GroupKind.Kind != "Horizon" {
			t.Errorf("%T %s on the target: claim %+v (%v), want the Horizon %s of management cluster %s",
				obj, keys[i], claim, ok, clientKey(h), mgmtID)
		}
		if len(obj.GetOwnerReferences()) != 0 {
			t.Errorf("%T %s on the target: owner references %v, want none", obj, keys[i], obj.GetOwnerReferences())
		}
	}
	objs, keys = children()
	for i, obj := range objs {
		if err := env.Client.Get(ctx, keys[i], obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s on the management cluster: err = %v, want NotFound", obj, keys[i], err)
		}
	}
	var local corev1.ConfigMapList
	if err := env.Client.List(ctx, &local, client.InNamespace(ns),
		client.MatchingLabels{config.ConfigBaseLabel: controller.ConfigBaseName(h)}); err != nil || len(local.Items) != 0 {
		t.Errorf("ConfigMaps on the management cluster: %d (%v), want none", len(local.Items), err)
	}

	// Deletion sweeps the target, then lets the Horizon go.
	if err := env.Client.Delete(ctx, h); err != nil {
		t.Fatal(err)
	}
	objs, keys = children()
	testenv.Eventually(t, 60*time.Second, "the target swept and the Horizon gone", func(ctx context.Context) (bool, error) {
		for i, obj := range objs {
			if err := target.Client.Get(ctx, keys[i], obj); !apierrors.IsNotFound(err) {
				return false, fmt.Errorf("%T %s still on the target: %w", obj, keys[i], err)
			}
		}
		if err := env.Client.Get(ctx, clientKey(h), h); !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("Horizon still there with finalizers %v: %w", h.Finalizers, err)
		}
		return true, nil
	})
}
