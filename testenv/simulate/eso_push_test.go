package simulate_test

import (
	"context"
	"crypto/sha3"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// ESO v0.20 computes syncedResourceVersion as "<generation>-" followed by the hex
// SHA3-224 of the %+v text of struct{annotations, labels map[string]string}; the text
// lists map keys sorted.
func TestESOResourceVersionIsESOsForm(t *testing.T) {
	m := metav1.ObjectMeta{Generation: 3,
		Annotations: map[string]string{"b": "2", "a": "1"}, Labels: map[string]string{"app": "identity"}}
	want := fmt.Sprintf("3-%x", sha3.Sum224([]byte("{annotations:map[a:1 b:2] labels:map[app:identity]}")))
	if got := simulate.ESOResourceVersion(m); got != want {
		t.Errorf("= %q, want %q", got, want)
	}
	empty := fmt.Sprintf("1-%x", sha3.Sum224([]byte("{annotations:map[] labels:map[]}")))
	if got := simulate.ESOResourceVersion(metav1.ObjectMeta{Generation: 1}); got != empty {
		t.Errorf("no labels or annotations: %q, want %q", got, empty)
	}
	m.Annotations["a"] = "changed"
	if simulate.ESOResourceVersion(m) == want {
		t.Error("an annotation change left the value unchanged")
	}
}

// A successful push records Ready=True (Synced) and ESO's syncedResourceVersion of the
// metadata it read; a push of unchanged metadata writes nothing; a failure keeps the
// last syncedResourceVersion; a missing source Secret is not pushed.
func TestMarkPushSecretSynced(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "identity-db", Namespace: ns},
		Data: map[string][]byte{"password": []byte("pw")}}
	if err := env.Client.Create(ctx, src); err != nil {
		t.Fatal(err)
	}
	newPS := func(name, source string, policy esov1alpha1.PushSecretUpdatePolicy) client.ObjectKey {
		ps := &esov1alpha1.PushSecret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "identity"}},
			Spec: esov1alpha1.PushSecretSpec{
				SecretStoreRefs: []esov1alpha1.PushSecretStoreRef{{Kind: "ClusterSecretStore", Name: "openbao"}},
				UpdatePolicy:    policy,
				Selector:        esov1alpha1.PushSecretSelector{Secret: &esov1alpha1.PushSecretSecret{Name: source}},
				Data: []esov1alpha1.PushSecretData{{Match: esov1alpha1.PushSecretMatch{
					RemoteRef: esov1alpha1.PushSecretRemoteRef{RemoteKey: "identity/db"}}}},
			},
		}
		if err := env.Client.Create(ctx, ps); err != nil {
			t.Fatal(err)
		}
		return client.ObjectKeyFromObject(ps)
	}
	ready := func(ps *esov1alpha1.PushSecret) esov1alpha1.PushSecretStatusCondition {
		t.Helper()
		if len(ps.Status.Conditions) != 1 || ps.Status.Conditions[0].Type != esov1alpha1.PushSecretReady {
			t.Fatalf("conditions = %+v, want one Ready", ps.Status.Conditions)
		}
		return ps.Status.Conditions[0]
	}

	key := newPS("backup", src.Name, esov1alpha1.PushSecretUpdatePolicyReplace)
	ps, err := simulate.MarkPushSecretSynced(ctx, env.Client, key)
	if err != nil {
		t.Fatal(err)
	}
	c := ready(ps)
	if c.Status != corev1.ConditionTrue || c.Reason != esov1alpha1.ReasonSynced || c.Message != simulate.PushSecretSyncedMessage ||
		ps.Status.RefreshTime.IsZero() || ps.Status.SyncedResourceVersion != simulate.ESOResourceVersion(ps.ObjectMeta) ||
		!strings.HasPrefix(ps.Status.SyncedResourceVersion, "1-") {
		t.Fatalf("after a push: status = %+v", ps.Status)
	}
	first := ps.DeepCopy()
	if !simulate.PushSecretSynced(ps) {
		t.Errorf("PushSecretSynced after a push = false")
	}

	again, err := simulate.MarkPushSecretSynced(ctx, env.Client, key)
	if err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != first.ResourceVersion {
		t.Errorf("a push of unchanged metadata wrote: resourceVersion %s -> %s", first.ResourceVersion, again.ResourceVersion)
	}

	again.Annotations = map[string]string{"stamp": "2"}
	if err := env.Client.Update(ctx, again); err != nil {
		t.Fatal(err)
	}
	if simulate.PushSecretSynced(again) {
		t.Errorf("PushSecretSynced after an annotation change = true")
	}
	ps, err = simulate.MarkPushSecretSynced(ctx, env.Client, key)
	if err != nil {
		t.Fatal(err)
	}
	if ps.Status.SyncedResourceVersion == first.Status.SyncedResourceVersion ||
		ps.Status.SyncedResourceVersion != simulate.ESOResourceVersion(ps.ObjectMeta) {
		t.Errorf("after an annotation change: syncedResourceVersion %q (before %q)", ps.Status.SyncedResourceVersion, first.Status.SyncedResourceVersion)
	}
	if ltt := ready(ps).LastTransitionTime; !ltt.Equal(&first.Status.Conditions[0].LastTransitionTime) {
		t.Error("lastTransitionTime changed although Ready stayed True")
	}
	synced := ps.Status.SyncedResourceVersion

	failed, err := simulate.MarkPushSecretFailed(ctx, env.Client, key, "set secret failed: permission denied")
	if err != nil {
		t.Fatal(err)
	}
	if simulate.PushSecretSynced(failed) {
		t.Errorf("PushSecretSynced after a failed push = true")
	}
	if c := ready(failed); c.Status != corev1.ConditionFalse || c.Reason != esov1alpha1.ReasonErrored ||
		c.Message != "set secret failed: permission denied" || failed.Status.SyncedResourceVersion != synced {
		t.Errorf("after a failed push: status = %+v; want Ready=False Errored, syncedResourceVersion %q kept", failed.Status, synced)
	}
	ps, err = simulate.MarkPushSecretSynced(ctx, env.Client, key)
	if err != nil {
		t.Fatal(err)
	}
	if c := ready(ps); c.Status != corev1.ConditionTrue || c.Reason != esov1alpha1.ReasonSynced {
		t.Errorf("a push after a failure: %+v", c)
	}

	ifNotExists := newPS("generated", src.Name, esov1alpha1.PushSecretUpdatePolicyIfNotExists)
	ps, err = simulate.MarkPushSecretSynced(ctx, env.Client, ifNotExists)
	if err != nil {
		t.Fatal(err)
	}
	if ready(ps).Message != simulate.PushSecretSyncedIfNotExistsMessage {
		t.Errorf("IfNotExists message %q", ready(ps).Message)
	}

	orphan := newPS("orphan", "absent", esov1alpha1.PushSecretUpdatePolicyReplace)
	if _, err := simulate.MarkPushSecretSynced(ctx, env.Client, orphan); err == nil || !strings.Contains(err.Error(), ns+"/absent") {
		t.Errorf("missing source Secret: %v, want an error naming it", err)
	}
	stored := &esov1alpha1.PushSecret{}
	if err := env.Client.Get(ctx, orphan, stored); err != nil {
		t.Fatal(err)
	}
	if len(stored.Status.Conditions) != 0 || stored.Status.SyncedResourceVersion != "" {
		t.Errorf("a PushSecret without its source Secret got a status: %+v", stored.Status)
	}

	missing := client.ObjectKey{Namespace: ns, Name: "missing"}
	for name, mark := range map[string]func() error{
		"synced": func() error { _, err := simulate.MarkPushSecretSynced(ctx, env.Client, missing); return err },
		"failed": func() error { _, err := simulate.MarkPushSecretFailed(ctx, env.Client, missing, "x"); return err },
	} {
		if err := mark(); !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), missing.String()) {
			t.Errorf("%s on a missing PushSecret: %v, want NotFound naming it", name, err)
		}
	}
}
