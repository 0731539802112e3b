package secrets_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// TestEnsureGeneratedSecretWaitsForPendingRestore: the generated Secret and the
// synced copy it restores from are both missing, as in a namespace re-created from a
// backup before ESO has run. While an ExternalSecret that writes the synced copy may
// still deliver the credential, no credential is generated; once ESO has answered
// that the backend does not hold it, one is.
func TestEnsureGeneratedSecretWaitsForPendingRestore(t *testing.T) {
	cases := map[string]struct {
		esName  string // "" creates no ExternalSecret
		target  string // spec.target.name
		policy  esov1.ExternalSecretDeletionPolicy
		none    bool // creationPolicy None
		setup   func(t *testing.T, es client.ObjectKey)
		wantGen bool
	}{
		"first install: no ExternalSecret writes the synced copy": {wantGen: true},
		"ExternalSecret not synced yet (no status)": {
			esName: "identity-admin", target: "identity-admin",
		},
		"ExternalSecret named differently, not synced yet": {
			esName: "admin-password-reader", target: "identity-admin",
		},
		"sync failed: SecretSyncedError (unreachable backend, or a missing key under Retain)": {
			esName: "identity-admin", target: "identity-admin",
			setup: func(t *testing.T, es client.ObjectKey) {
				if _, err := simulate.MarkExternalSecretNotSynced(context.Background(), env.Client, es, esov1.ConditionReasonSecretSyncedError); err != nil {
					t.Fatal(err)
				}
			},
		},
		"Ready=True but older than the spec": {
			esName: "identity-admin", target: "identity-admin", policy: esov1.DeletionPolicyDelete,
			setup: func(t *testing.T, es client.ObjectKey) {
				setESStatus(t, es, corev1.ConditionTrue, esov1.ConditionReasonSecretDeleted, -1, time.Now())
			},
		},
		"Ready=True restored with the object: refreshed before it was created": {
			esName: "identity-admin", target: "identity-admin", policy: esov1.DeletionPolicyDelete,
			setup: func(t *testing.T, es client.ObjectKey) {
				setESStatus(t, es, corev1.ConditionTrue, esov1.ConditionReasonSecretDeleted, 0, time.Now().Add(-time.Hour))
			},
		},
		"Ready=True SecretSynced, but the synced copy was deleted after the sync": {
			esName: "identity-admin", target: "identity-admin",
			setup: func(t *testing.T, es client.ObjectKey) {
				bao := newBackend()
				bao.hold(adminRef, "Held0By0The0Backend0Since0Day0One")
				bao.sync(t, es)
				if err := env.Client.Delete(context.Background(), secretObject(es)); err != nil {
					t.Fatal(err)
				}
			},
		},
		"backend lacks the key, deletionPolicy Delete: Ready=True SecretDeleted": {
			esName: "identity-admin", target: "identity-admin", policy: esov1.DeletionPolicyDelete,
			setup: func(t *testing.T, es client.ObjectKey) {
				newBackend().sync(t, es)
			},
			wantGen: true,
		},
		"backend lacks the key, deletionPolicy Merge: synced without the key": {
			esName: "identity-admin", target: "identity-admin", policy: esov1.DeletionPolicyMerge,
			setup: func(t *testing.T, es client.ObjectKey) {
				newBackend().sync(t, es)
			},
			wantGen: true,
		},
		"ExternalSecret with creationPolicy None writes no Secret": {
			esName: "identity-admin", target: "identity-admin", none: true, wantGen: true,
		},
		"ExternalSecret for another Secret": {
			esName: "identity-admin", target: "glance-admin", wantGen: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			synced := client.ObjectKey{Namespace: ns, Name: "identity-admin"}
			gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "identity-admin-source"}, "password")
			gs.RestoreFrom = &synced
			if tc.esName != "" {
				es := desiredExternalSecret(ns, tc.esName, tc.target, secrets.EffectiveStoreRef(nil))
				es.Spec.Target.DeletionPolicy = tc.policy
				if tc.none {
					es.Spec.Target.CreationPolicy = esov1.CreatePolicyNone
				}
				if err := env.Client.Create(ctx, es); err != nil {
					t.Fatal(err)
				}
				if tc.setup != nil {
					tc.setup(t, client.ObjectKeyFromObject(es))
				}
			}

			for pass := range 2 {
				outcome, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, owner, gs)
				if err != nil {
					t.Fatalf("pass %d: %v", pass+1, err)
				}
				if tc.wantGen {
					want := secrets.SecretGenerated
					if pass > 0 {
						want = secrets.SecretKept
					}
					if outcome != want {
						t.Fatalf("pass %d = %v, want %v", pass+1, outcome, want)
					}
					continue
				}
				if outcome != secrets.SecretRestorePending || outcome.Ready() {
					t.Fatalf("pass %d = %v (ready %v), want RestorePending, not ready", pass+1, outcome, outcome.Ready())
				}
				if err := env.Client.Get(ctx, gs.Key, &corev1.Secret{}); !apierrors.IsNotFound(err) {
					t.Fatalf("pass %d wrote the generated Secret while the restore is pending (get: %v)", pass+1, err)
				}
			}
		})
	}
}

// TestRestoredNamespaceKeepsTheBackendCredential runs a whole life: the first install
// generates and pushes the credential with no manual step; the namespace is then
// re-created from a backup (the CR, the ExternalSecret and the PushSecret come back,
// the Secrets do not) and the operator runs before ESO. The credential in the backend
// is never replaced, and the generated Secret comes back with it.
func TestRestoredNamespaceKeepsTheBackendCredential(t *testing.T) {
	ctx := context.Background()
	bao := newBackend()
	ref := secrets.EffectiveStoreRef(nil)

	type world struct {
		ns     string
		owner  client.Object
		gs     secrets.GeneratedSecret
		synced client.ObjectKey
	}
	newWorld := func() world {
		ns := env.Namespace(t)
		synced := client.ObjectKey{Namespace: ns, Name: "identity-admin"}
		gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "identity-admin-source"}, "password")
		gs.RestoreFrom = &synced
		return world{ns: ns, owner: newOwner(t, ns), gs: gs, synced: synced}
	}
	// pass is the operator's Secrets step: the ExternalSecret (deletionPolicy Delete,
	// so ESO reports a key the backend lacks as a completed sync), the generated
	// credential, then its PushSecret.
	pass := func(w world) secrets.GenerateOutcome {
		t.Helper()
		es := desiredExternalSecret(w.ns, w.synced.Name, w.synced.Name, ref)
		es.Spec.Target.DeletionPolicy = esov1.DeletionPolicyDelete
		if err := env.Client.Create(ctx, es); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		outcome, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, w.owner, w.gs)
		if err != nil {
			t.Fatal(err)
		}
		if !outcome.Ready() {
			return outcome
		}
		ps, err := secrets.GeneratedPushSecret(w.gs, secrets.GeneratedPush{
			StoreRef: ref, RemoteKey: "identity/admin", Property: "password",
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, w.owner, ps); err != nil {
			t.Fatal(err)
		}
		return outcome
	}
	eso := func(w world) {
		t.Helper()
		bao.push(t, client.ObjectKey{Namespace: w.ns, Name: w.gs.Key.Name})
		bao.sync(t, w.synced)
	}

	// First install: the ExternalSecret is there before anything was pushed.
	first := newWorld()
	if got := pass(first); got != secrets.SecretRestorePending {
		t.Fatalf("first pass before ESO ran = %v, want RestorePending", got)
	}
	eso(first) // the backend lacks the key: Ready=True, SecretDeleted
	if got := pass(first); got != secrets.SecretGenerated {
		t.Fatalf("first install after ESO answered = %v, want Generated", got)
	}
	eso(first)
	value, _ := readValue(t, first.gs.Key, "password")
	if got, _ := bao.get("identity/admin/password"); got != value {
		t.Fatal("the generated credential was not pushed to the backend")
	}
	if got, _ := readValue(t, first.synced, "password"); got != value {
		t.Fatal("the synced copy does not hold the generated credential")
	}
	if got := pass(first); got != secrets.SecretKept {
		t.Fatalf("converged pass = %v, want Kept", got)
	}
	writes := bao.Writes()

	// The namespace is re-created from a backup; the operator runs before ESO.
	restored := newWorld()
	for range 3 {
		if got := pass(restored); got != secrets.SecretRestorePending {
			t.Fatalf("pass before ESO synced = %v, want RestorePending", got)
		}
		eso := restored
		bao.push(t, client.ObjectKey{Namespace: eso.ns, Name: eso.gs.Key.Name})
	}
	bao.sync(t, restored.synced)
	if got := pass(restored); got != secrets.SecretRestored {
		t.Fatalf("pass after ESO synced = %v, want Restored", got)
	}
	eso(restored)
	if got, _ := readValue(t, restored.gs.Key, "password"); got != value {
		t.Error("the restored generated Secret does not hold the backend's credential")
	}
	if got, _ := bao.get("identity/admin/password"); got != value || bao.Writes() != writes {
		t.Errorf("the backend's credential was replaced (%d writes after the first install, want %d)", bao.Writes(), writes)
	}
}

// TestGeneratedPushNeverOverwritesTheBackend: even when a credential is generated
// while the backend holds one (no restore source was configured), the PushSecret
// built by GeneratedPushSecret leaves the backend's value alone; a PushSecret with
// ESO's default updatePolicy (Replace) would have replaced it.
func TestGeneratedPushNeverOverwritesTheBackend(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	ref := secrets.EffectiveStoreRef(nil)
	bao := newBackend()
	bao.hold("identity/admin/password", "Held0By0The0Backend0Since0Day0One")
	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "identity-admin-source"}, "password")
	if outcome, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, owner, gs); err != nil || outcome != secrets.SecretGenerated {
		t.Fatalf("= %v, %v", outcome, err)
	}
	ps, err := secrets.GeneratedPushSecret(gs, secrets.GeneratedPush{StoreRef: ref, RemoteKey: "identity/admin", Property: "password"})
	if err != nil {
		t.Fatal(err)
	}
	if err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, owner, ps); err != nil {
		t.Fatal(err)
	}
	bao.push(t, client.ObjectKeyFromObject(ps))
	if got, _ := bao.get("identity/admin/password"); got != "Held0By0The0Backend0Since0Day0One" {
		t.Fatal("the generated credential replaced the backend's")
	}

	// The same push with ESO's default update policy replaces it: the simulator
	// models the difference.
	replace := desiredPushSecret(ns, gs.Key.Name, ref)
	replace.Name = "replacing"
	if err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, owner, replace); err != nil {
		t.Fatal(err)
	}
	bao.push(t, client.ObjectKeyFromObject(replace))
	if got, _ := bao.get("identity/admin/password"); got == "Held0By0The0Backend0Since0Day0One" {
		t.Fatal("the simulator did not replace the value under updatePolicy Replace")
	}
}

// TestWaitForExternalSecretIgnoresStaleStatus: a Ready condition from a sync of an
// older spec (ESO's status.syncedResourceVersion "<generation>-<hash>" behind
// metadata.generation) is not ready.
func TestWaitForExternalSecretIgnoresStaleStatus(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	ref := secrets.EffectiveStoreRef(nil)
	es := desiredExternalSecret(ns, "identity-admin", "identity-admin", ref)
	if err := env.Client.Create(ctx, es); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(es)
	ready := func() bool {
		t.Helper()
		exists, ready, err := secrets.WaitForExternalSecret(ctx, env.Client, key)
		if err != nil || !exists {
			t.Fatalf("= (%v, %v, %v)", exists, ready, err)
		}
		return ready
	}
	if _, err := simulate.MarkExternalSecretSynced(ctx, env.Client, key, map[string][]byte{"password": []byte("pw")}); err != nil {
		t.Fatal(err)
	}
	if !ready() {
		t.Fatal("synced ExternalSecret (simulator's syncedResourceVersion) is not ready")
	}
	setESStatus(t, key, corev1.ConditionTrue, esov1.ConditionReasonSecretSynced, 0, time.Now())
	if !ready() {
		t.Fatal("synced ExternalSecret (ESO's <generation>-<hash>) is not ready")
	}

	// The spec changes: generation 2, the status still reports the sync of 1.
	current := &esov1.ExternalSecret{}
	if err := env.Client.Get(ctx, key, current); err != nil {
		t.Fatal(err)
	}
	current.Spec.Data[0].RemoteRef.Property = "new-password"
	if err := env.Client.Update(ctx, current); err != nil {
		t.Fatal(err)
	}
	if current.Generation != 2 {
		t.Fatalf("generation %d after a spec change, want 2", current.Generation)
	}
	if ready() {
		t.Error("Ready=True of the previous spec reads as ready")
	}
	setESStatus(t, key, corev1.ConditionTrue, esov1.ConditionReasonSecretSynced, 0, time.Now())
	if !ready() {
		t.Error("ExternalSecret synced at the current generation is not ready")
	}
	// A label change does not change the spec: still ready.
	if err := env.Client.Get(ctx, key, current); err != nil {
		t.Fatal(err)
	}
	current.Labels = map[string]string{"team": "identity"}
	if err := env.Client.Update(ctx, current); err != nil {
		t.Fatal(err)
	}
	if !ready() {
		t.Error("a metadata-only change made the ExternalSecret not ready")
	}

	// Ready=True without a syncedResourceVersion, or with one that is not ESO's, proves
	// nothing about the spec it synced.
	for _, v := range []string{"", "abc-def", "-1"} {
		err := env.Client.Get(ctx, key, current)
		if err != nil {
			t.Fatal(err)
		}
		current.Status.SyncedResourceVersion = v
		if err := env.Client.Status().Update(ctx, current); err != nil {
			t.Fatal(err)
		}
		if ready() {
			t.Errorf("syncedResourceVersion %q reads as ready", v)
		}
	}
}

// TestRestoreReadsPastALaggingCache: the operator creates the restore ExternalSecret
// and, in the same pass, finds the generated Secret missing. Its informer cache has not
// seen the ExternalSecret yet; a decision taken from the cache would see no
// ExternalSecret and generate over a backup the backend may hold. The ExternalSecrets
// and the synced copy are read past the cache, so the restore is pending.
func TestRestoreReadsPastALaggingCache(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	synced := client.ObjectKey{Namespace: ns, Name: "identity-admin"}
	es := desiredExternalSecret(ns, synced.Name, synced.Name, secrets.EffectiveStoreRef(nil))
	if err := env.Client.Create(ctx, es); err != nil {
		t.Fatal(err)
	}
	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	cached := interceptor.NewClient(base, interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*esov1.ExternalSecretList); ok {
				return nil // the cache has not seen the ExternalSecret yet
			}
			return c.List(ctx, list, opts...)
		},
	})

	check, err := secrets.CheckRestore(ctx, cached, synced)
	if err != nil {
		t.Fatal(err)
	}
	if check.Secret != nil || check.Pending == nil || *check.Pending != client.ObjectKeyFromObject(es) || check.Why != "has not synced yet" {
		t.Fatalf("CheckRestore = %+v, want ExternalSecret %s pending (has not synced yet)", check, client.ObjectKeyFromObject(es))
	}

	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "identity-admin-source"}, "password")
	gs.RestoreFrom = &synced
	outcome, err := secrets.EnsureGeneratedSecret(ctx, cached, env.Scheme, newOwner(t, ns), gs)
	if err != nil || outcome != secrets.SecretRestorePending {
		t.Fatalf("EnsureGeneratedSecret = %v, %v; want RestorePending", outcome, err)
	}
	if err := env.Client.Get(ctx, gs.Key, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a credential was generated while the restore is pending: %v", err)
	}
}

// TestCheckRestore: what CheckRestore answers for a synced copy that holds data, for
// ExternalSecrets that do not write it, and for a failed read.
func TestCheckRestore(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	synced := client.ObjectKey{Namespace: ns, Name: "restore-copy"}

	check, err := secrets.CheckRestore(ctx, env.Client, synced)
	if err != nil || check.Secret != nil || check.Pending != nil || check.Why != "" {
		t.Fatalf("nothing there: %+v, %v; want an empty answer (a first install)", check, err)
	}

	other := desiredExternalSecret(ns, "other", "other-target", secrets.EffectiveStoreRef(nil))
	if err := env.Client.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	if check, err = secrets.CheckRestore(ctx, env.Client, synced); err != nil || check.Pending != nil {
		t.Fatalf("an ExternalSecret writing another Secret: %+v, %v; want nothing pending", check, err)
	}

	copyOf := secretObject(synced)
	copyOf.Data = map[string][]byte{"k": []byte("v")}
	if err := env.Client.Create(ctx, copyOf); err != nil {
		t.Fatal(err)
	}
	if check, err = secrets.CheckRestore(ctx, env.Client, synced); err != nil || check.Secret == nil || string(check.Secret.Data["k"]) != "v" {
		t.Fatalf("synced copy with data: %+v, %v; want the Secret", check, err)
	}

	for verb, funcs := range map[string]interceptor.Funcs{
		"list": {List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return apierrors.NewInternalError(errors.New("etcd unavailable"))
		}},
		"get": {Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return apierrors.NewInternalError(errors.New("etcd unavailable"))
		}},
	} {
		failing := interceptor.NewClient(fakeBase(t), funcs)
		_, err := secrets.CheckRestore(ctx, failing, synced)
		if err == nil || !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), synced.String()) {
			t.Errorf("%s fails: %v; want the API error, naming Secret %s", verb, err, synced)
		}
	}
}
