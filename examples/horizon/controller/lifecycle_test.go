package controller_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/world"
)

// pokeAnnotation is an annotation the tests change on a Horizon to bring a pass: the
// controller's predicate passes annotation changes.
const pokeAnnotation = "test.horizon.openstack.c5c3.io/poke"

// readyHorizon starts an operator for a fresh namespace, creates a minimal Horizon
// named name there and waits until it is Ready, playing its dependencies with a world
// that holds key as the SECRET_KEY; it returns the world too.
func readyHorizon(t *testing.T, name, key string) (*operator, *v1alpha1.Horizon, *world.World) {
	t.Helper()
	ns := env.Namespace(t)
	op := startOperator(t, ns, operatorOptions{})
	h := newHorizon(ns, name)
	if err := env.Client.Create(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	w := newWorld(env.Client, key)
	waitReady(t, h, w)
	return op, h, w
}

// poke changes pokeAnnotation on h with a merge patch of that annotation alone (as
// kubectl annotate does), which brings a pass and leaves the generation alone.
func poke(t *testing.T, h *v1alpha1.Horizon) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, pokeAnnotation, strconv.FormatInt(time.Now().UnixNano(), 10))
	if err := env.Client.Patch(context.Background(), h, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("poke Horizon %s: %v", clientKey(h), err)
	}
}

// keyDigest is the documented digest of a SECRET_KEY: the first 16 hex digits of its
// SHA-256.
func keyDigest(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:8])
}

// replicaSetsOf lists the ReplicaSets the Deployment d controls.
func replicaSetsOf(ctx context.Context, d *appsv1.Deployment) ([]appsv1.ReplicaSet, error) {
	var list appsv1.ReplicaSetList
	if err := env.Client.List(ctx, &list, client.InNamespace(d.Namespace)); err != nil {
		return nil, err
	}
	var out []appsv1.ReplicaSet
	for _, rs := range list.Items {
		if ref := metav1.GetControllerOf(&rs); ref != nil && ref.UID == d.UID {
			out = append(out, rs)
		}
	}
	return out, nil
}

// rolledOut reports whether the Deployment d has rolled out its current template: the
// Deployment controller observed it, and every replica is updated and available.
func rolledOut(d *appsv1.Deployment) bool {
	want := ptr.Deref(d.Spec.Replicas, 1)
	s := d.Status
	return s.ObservedGeneration == d.Generation && s.UpdatedReplicas == want && s.Replicas == want &&
		s.AvailableReplicas == want && s.ReadyReplicas == want
}

// waitRolledOut waits until the Horizon's Deployment has rolled out a template that
// satisfies match, and returns it.
func waitRolledOut(t *testing.T, h *v1alpha1.Horizon, what string, match func(*appsv1.Deployment) bool) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	testenv.Eventually(t, 60*time.Second, what, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: h.Namespace, Name: h.Name}, d); err != nil {
			return false, err
		}
		return match(d) && rolledOut(d), nil
	})
	return d
}

// configMapsOf returns the names of the Horizon's content-addressed ConfigMaps on the
// management cluster.
func configMapsOf(ctx context.Context, h *v1alpha1.Horizon) ([]string, error) {
	var list corev1.ConfigMapList
	if err := env.Client.List(ctx, &list, client.InNamespace(h.Namespace),
		client.MatchingLabels{config.ConfigBaseLabel: controller.ConfigBaseName(h)}); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(list.Items))
	for _, cm := range list.Items {
		names = append(names, cm.Name)
	}
	slices.Sort(names)
	return names, nil
}

// mountedConfigMap is the ConfigMap of the pod template's settings volume.
func mountedConfigMap(spec *corev1.PodSpec) string {
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil {
			return v.ConfigMap.Name
		}
	}
	return ""
}

// When ESO syncs a new SECRET_KEY, the pods roll: the digest on the pod template
// changes, the real Deployment controller creates a new ReplicaSet that takes over the
// ready replicas, the Horizon is Ready again, and the key itself is written nowhere but
// the Secret.
func TestSecretKeyRotationRollsThePods(t *testing.T) {
	const firstKey, secondKey = "first-key-7c1e0a9b52d4", "rotated-key-3f86d2e1b7a0"
	_, h, w := readyHorizon(t, "rotate", firstKey)
	before := waitRolledOut(t, h, "first rollout", func(d *appsv1.Deployment) bool {
		return d.Spec.Template.Annotations[controller.SecretKeyHashAnnotation] == keyDigest(firstKey)
	})
	oldRSs, err := replicaSetsOf(context.Background(), before)
	if err != nil {
		t.Fatal(err)
	}
	if len(oldRSs) != 1 {
		t.Fatalf("ReplicaSets before the rotation: %d, want 1", len(oldRSs))
	}

	rotateKey(w, secondKey)
	if err := w.Play(context.Background(), nil, h); err != nil { // ESO syncs the rotated key
		t.Fatal(err)
	}
	after := waitRolledOut(t, h, "rollout of the rotated key", func(d *appsv1.Deployment) bool {
		return d.Spec.Template.Annotations[controller.SecretKeyHashAnnotation] == keyDigest(secondKey)
	})
	rss, err := replicaSetsOf(context.Background(), after)
	if err != nil {
		t.Fatal(err)
	}
	var fresh *appsv1.ReplicaSet
	for i := range rss {
		rs := &rss[i]
		switch {
		case rs.UID == oldRSs[0].UID:
			if rs.Status.Replicas != 0 || ptr.Deref(rs.Spec.Replicas, 0) != 0 {
				t.Errorf("the old ReplicaSet %s still has %d replicas (spec %d)", rs.Name, rs.Status.Replicas, ptr.Deref(rs.Spec.Replicas, 0))
			}
		case rs.Spec.Template.Annotations[controller.SecretKeyHashAnnotation] == keyDigest(secondKey):
			fresh = rs
		}
	}
	if fresh == nil {
		t.Fatalf("no ReplicaSet with the rotated key's digest among %d", len(rss))
	}
	if fresh.Status.ReadyReplicas != ptr.Deref(after.Spec.Replicas, 1) {
		t.Errorf("the new ReplicaSet %s has %d ready replicas, want %d", fresh.Name, fresh.Status.ReadyReplicas, ptr.Deref(after.Spec.Replicas, 1))
	}
	waitReady(t, h, w)

	for what, obj := range map[string]client.Object{"Horizon": h, "Deployment": after, "ReplicaSet": fresh} {
		raw, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{firstKey, secondKey} {
			if bytes.Contains(raw, []byte(key)) {
				t.Errorf("the SECRET_KEY %q appears in the %s", key, what)
			}
		}
	}
}

// Each change of the settings renders a new ConfigMap that status.configMap and the
// pods follow; the prune keeps the current ConfigMap and the newest three older ones,
// and beyond those spares every one that a live ReplicaSet still mounts until that
// ReplicaSet is gone; the Deployment's own history is no longer than what the prune
// retains.
func TestConfigChangeRollsAndPrunes(t *testing.T) {
	_, h, w := readyHorizon(t, "tz", "config-key")
	cms := []string{h.Status.ConfigMap}

	// A ReplicaSet of someone else's (not the Deployment's: its own selector) that
	// mounts the first ConfigMap, at zero replicas, as a rollback history would.
	held := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: h.Namespace, Name: "held"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(int32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "held"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "held"}},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "c", Image: "registry.example/held:1"}},
					Volumes: []corev1.Volume{{Name: "settings", VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cms[0]}},
					}}},
				},
			},
		},
	}
	if err := env.Client.Create(context.Background(), held); err != nil {
		t.Fatal(err)
	}

	zones := []string{"Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney", "Africa/Nairobi"}
	for i, zone := range zones {
		renderedAfter(t, h)
		updateHorizon(t, env, h, func(h *v1alpha1.Horizon) { h.Spec.TimeZone = zone })
		waitReady(t, h, w)
		if err := env.Client.Get(context.Background(), clientKey(h), h); err != nil {
			t.Fatal(err)
		}
		current := h.Status.ConfigMap
		if slices.Contains(cms, current) {
			t.Fatalf("time zone %s: status.configMap %s is not a new ConfigMap (earlier: %v)", zone, current, cms)
		}
		cms = append(cms, current)
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: h.Namespace, Name: current}, cm); err != nil {
			t.Fatalf("time zone %s: ConfigMap %s of status.configMap: %v", zone, current, err)
		}
		if !bytes.Contains([]byte(cm.Data[controller.SettingsFile]), []byte(zone)) {
			t.Errorf("time zone %s: ConfigMap %s does not render it", zone, current)
		}
		waitRolledOut(t, h, fmt.Sprintf("rollout of ConfigMap %s", current), func(d *appsv1.Deployment) bool {
			return mountedConfigMap(&d.Spec.Template.Spec) == current
		})

		// Four changes leave four older ConfigMaps: the newest three are retained and
		// the oldest is held by the ReplicaSet, so none is pruned yet.
		if i == 3 {
			poke(t, h)
			time.Sleep(2 * time.Second)
			names, err := configMapsOf(context.Background(), h)
			if err != nil {
				t.Fatal(err)
			}
			if want := sorted(cms); !slices.Equal(names, want) {
				t.Fatalf("after four changes the ConfigMaps are %v, want all of %v", names, want)
			}
		}
	}

	// Five changes: the first two ConfigMaps are beyond the three retained. The
	// Deployment keeps as many old ReplicaSets as the prune retains ConfigMaps
	// (revisionHistoryLimit), so the second one's ReplicaSet is gone and the prune
	// deletes it; the first stays, as the held ReplicaSet mounts it.
	d := &appsv1.Deployment{}
	if err := env.Client.Get(context.Background(), clientKey(h), d); err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(d.Spec.RevisionHistoryLimit, 10); got != deployment.DefaultRevisionHistoryLimit ||
		int(got) != controller.RetainConfigMaps {
		t.Fatalf("Deployment revisionHistoryLimit = %d, want %d, the ConfigMaps the prune retains", got, controller.RetainConfigMaps)
	}
	expectConfigMaps(t, h, sorted(append([]string{cms[0]}, cms[2:]...)))

	// Once the held ReplicaSet is gone, nothing spares the first ConfigMap any more.
	if err := env.Client.Delete(context.Background(), held); err != nil {
		t.Fatal(err)
	}
	expectConfigMaps(t, h, sorted(cms[2:]))
}

// expectConfigMaps waits until the Horizon's ConfigMaps are exactly want, poking the
// Horizon every two seconds so that a pass prunes once the operator's cache has seen
// the ReplicaSets go.
func expectConfigMaps(t *testing.T, h *v1alpha1.Horizon, want []string) {
	t.Helper()
	var names []string
	last := time.Now()
	testenv.Eventually(t, 60*time.Second, fmt.Sprintf("ConfigMaps are %v", want), func(ctx context.Context) (bool, error) {
		var err error
		if names, err = configMapsOf(ctx, h); err != nil {
			return false, err
		}
		if slices.Equal(names, want) {
			return true, nil
		}
		if time.Since(last) > 2*time.Second {
			poke(t, h)
			last = time.Now()
		}
		return false, fmt.Errorf("ConfigMaps are %v", names)
	})
}

// renderedAfter waits until the second after the creationTimestamp of the Horizon's
// current ConfigMap (status.configMap): the prune orders ConfigMaps by that timestamp,
// in whole seconds, so the tests render at most one a second to know which are the
// newest.
func renderedAfter(t *testing.T, h *v1alpha1.Horizon) {
	t.Helper()
	if err := env.Client.Get(context.Background(), clientKey(h), h); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: h.Namespace, Name: h.Status.ConfigMap}, cm); err != nil {
		t.Fatalf("ConfigMap %s of status.configMap: %v", h.Status.ConfigMap, err)
	}
	time.Sleep(time.Until(cm.CreationTimestamp.Add(time.Second)))
}

// sorted returns a sorted copy of s.
func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// A converged Horizon's passes write nothing: neither the passes the controller runs
// (brought by an annotation change) nor ones called directly send a write through the
// operator's clients, and no child's resourceVersion moves.
func TestConvergedPassWritesNothing(t *testing.T) {
	op, h, _ := readyHorizon(t, "quiet", "quiet-key")
	waitRolledOut(t, h, "first rollout", func(*appsv1.Deployment) bool { return true })
	req := ctrl.Request{NamespacedName: clientKey(h)}
	pass := func(ctx context.Context) error {
		_, err := op.rec.Reconcile(ctx, req)
		return err
	}
	// The informers catch up with the writes that led to Ready.
	testenv.Eventually(t, 30*time.Second, "a pass that writes nothing", func(ctx context.Context) (bool, error) {
		op.counter.Reset()
		if err := pass(ctx); err != nil {
			return false, err
		}
		return op.counter.Writes() == 0, nil
	})

	before, err := testenv.ControlledVersions(context.Background(), env.Client, h, op.rec.Children()...)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) < 5 {
		t.Fatalf("children controlled by the Horizon: %v, want at least the Deployment, Service, PDB, ConfigMap and ExternalSecret", before)
	}
	op.counter.Reset()
	for range 3 {
		if err := pass(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	poke(t, h)
	poked := h.ResourceVersion
	time.Sleep(3 * time.Second) // the controller's pass of the poke, and any recheck
	if n := op.counter.Writes(); n != 0 {
		t.Errorf("converged passes sent %d writes (POST %d, PUT %d, PATCH %d, DELETE %d), want none", n,
			op.counter.Method("POST"), op.counter.Method("PUT"), op.counter.Method("PATCH"), op.counter.Method("DELETE"))
	}
	after, err := testenv.ControlledVersions(context.Background(), env.Client, h, op.rec.Children()...)
	if err != nil {
		t.Fatal(err)
	}
	if changes := before.Changes(after); len(changes) > 0 {
		t.Errorf("converged passes changed children:\n%v", changes)
	}
	if err := env.Client.Get(context.Background(), clientKey(h), h); err != nil {
		t.Fatal(err)
	}
	if h.ResourceVersion != poked {
		t.Errorf("the Horizon's resourceVersion moved from %s to %s after the poke: a converged pass wrote its status", poked, h.ResourceVersion)
	}
}

// Deleting a Horizon on the management cluster needs no finalizer: every child carries
// a controller owner reference to the Horizon, and the real garbage collector removes
// them all (and, in turn, what they own).
func TestDeletionIsGarbageCollected(t *testing.T) {
	_, h, _ := readyHorizon(t, "doomed", "doomed-key")
	d := waitRolledOut(t, h, "first rollout", func(*appsv1.Deployment) bool { return true })
	if len(h.Finalizers) != 0 {
		t.Fatalf("finalizers of a Horizon on the management cluster = %v, want none", h.Finalizers)
	}
	key := client.ObjectKey{Namespace: h.Namespace, Name: h.Name}
	children := []client.Object{
		&appsv1.Deployment{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{}, &esov1.ExternalSecret{},
		&corev1.ConfigMap{},
	}
	keys := []client.ObjectKey{key, key, key, {Namespace: h.Namespace, Name: controller.SecretKeyName(h)},
		{Namespace: h.Namespace, Name: h.Status.ConfigMap}}
	for i, obj := range children {
		if err := env.Client.Get(context.Background(), keys[i], obj); err != nil {
			t.Fatalf("%T %s: %v", obj, keys[i], err)
		}
		if ref := metav1.GetControllerOf(obj); ref == nil || ref.UID != h.UID || ref.Kind != "Horizon" {
			t.Fatalf("%T %s: controller reference %v, want the Horizon %s", obj, keys[i], ref, h.UID)
		}
	}
	rss, err := replicaSetsOf(context.Background(), d)
	if err != nil || len(rss) == 0 {
		t.Fatalf("ReplicaSets of the Deployment: %d (%v)", len(rss), err)
	}

	if err := env.Client.Delete(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{}
	secretKey := client.ObjectKey{Namespace: h.Namespace, Name: controller.SecretKeyName(h)}
	gone := append(slices.Clone(children), &appsv1.ReplicaSet{}, secret)
	goneKeys := append(slices.Clone(keys), client.ObjectKeyFromObject(&rss[0]), secretKey)
	testenv.Eventually(t, 60*time.Second, "the garbage collector removes every child", func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, clientKey(h), &v1alpha1.Horizon{}); !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("Horizon still there: %w", err)
		}
		for i, obj := range gone {
			if err := env.Client.Get(ctx, goneKeys[i], obj); !apierrors.IsNotFound(err) {
				return false, fmt.Errorf("%T %s still there: %w", obj, goneKeys[i], err)
			}
		}
		return true, nil
	})
	names, err := configMapsOf(context.Background(), h)
	if err != nil || len(names) != 0 {
		t.Fatalf("ConfigMaps left: %v (%v)", names, err)
	}
}
