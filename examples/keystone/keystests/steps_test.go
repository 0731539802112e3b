package keystests

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// childLists are the kinds of the step's children, for testenv.ExpectUnchanged.
func childLists() []client.ObjectList {
	return []client.ObjectList{&corev1.SecretList{}, &esov1.ExternalSecretList{}, &esov1alpha1.PushSecretList{}, &batchv1.CronJobList{}}
}

// TestKeysGeneratedOnce: the first install waits until ESO answered that the backend
// holds no repository, then generates one (keys 0 and 1) into a Secret the Keystone
// controls, backs it up with a PushSecret and rotates it with a CronJob. Later passes
// write nothing and the repository never changes; a lost Secret comes back from the
// backup with the same keys.
func TestKeysGeneratedOnce(t *testing.T) {
	for _, kd := range kinds {
		t.Run(kd.name, func(t *testing.T) {
			ctx := context.Background()
			w := newWorld(t, kd, nil)

			// Pass 1: the restore ExternalSecret is created first, and nothing is
			// generated while it has not answered.
			res, err := w.pass()
			if err != nil || res.RequeueAfter != secrets.PollInterval {
				t.Fatalf("pass 1 = %v, %v; want a requeue after %s", res, err, secrets.PollInterval)
			}
			w.expectCondition(metav1.ConditionFalse, keystone.ReasonWaitingForKeyRestore,
				w.restoreKey().Name, w.step.RemoteKey(w.k), "has not synced yet")
			expectAbsent(t, w.secretKey(), &corev1.Secret{})
			es := &esov1.ExternalSecret{}
			if err := env.Client.Get(ctx, w.restoreKey(), es); err != nil {
				t.Fatal(err)
			}
			checkRestoreExternalSecret(t, w, es)

			// ESO answers that the backend holds nothing: the repository is generated.
			w.bao.sync(t, w.restoreKey())
			if res, err := w.pass(); err != nil || !res.IsZero() {
				t.Fatalf("pass 2 = %v, %v; want done", res, err)
			}
			secret, _ := w.secret()
			if got := slices.Sorted(mapKeys(secret.Data)); !slices.Equal(got, []string{"0", "1"}) {
				t.Errorf("generated Secret has data keys %v, want [0 1]", got)
			}
			repo := w.repo()
			if !metav1.IsControlledBy(secret, w.k) {
				t.Errorf("Secret is not controlled by the Keystone: %+v", secret.OwnerReferences)
			}
			if got := secret.Labels[apply.ManagedByLabel]; got != fieldManager {
				t.Errorf("Secret label %s = %q, want %q", apply.ManagedByLabel, got, fieldManager)
			}
			if got := secret.Annotations[rotation.RotatedAtAnnotation]; got != t0.Format(time.RFC3339) {
				t.Errorf("Secret annotation %s = %q, want the generation time %s", rotation.RotatedAtAnnotation, got, t0.Format(time.RFC3339))
			}
			w.expectCondition(metav1.ConditionTrue, keystone.ReasonKeysReady,
				w.secretKey().String(), "2 active", w.step.CronJobName(w.k), "168h")
			checkPushSecret(t, w)
			checkCronJob(t, w, 3, "168h")
			if !w.logged("generated key repository") {
				t.Error("the generation was not logged")
			}

			// Converged: no write, by the writes reported and by the stored state.
			testenv.ExpectUnchanged(t, env.Client, w.k, func(context.Context) error {
				res, writes, err := w.passWrites()
				if err != nil || !res.IsZero() {
					t.Fatalf("converged pass = %v, %v", res, err)
				}
				if len(writes) > 0 {
					t.Errorf("converged pass wrote %v", testenv.WriteStrings(writes))
				}
				return nil
			}, childLists()...)
			if again, _ := w.secret(); !sameData(again.Data, secret.Data) {
				t.Fatal("the repository changed on a converged pass")
			}

			// ESO pushes the repository and syncs it back into the restore copy.
			w.eso()
			backup, ok := w.bao.Get(w.step.RemoteKey(w.k))
			if !ok || len(backup) != 2 || backup["0"] != string(repo[0]) || backup["1"] != string(repo[1]) {
				t.Fatal("the backend does not hold the generated repository")
			}
			if res, err := w.pass(); err != nil || !res.IsZero() {
				t.Fatalf("pass after the backup = %v, %v", res, err)
			}

			// The Secret is lost: it comes back from the restore copy, never regenerated.
			if err := env.Client.Delete(ctx, secret); err != nil {
				t.Fatal(err)
			}
			w.now = t0.Add(time.Hour)
			if res, err := w.pass(); err != nil || !res.IsZero() {
				t.Fatalf("pass after the loss = %v, %v", res, err)
			}
			restored, _ := w.secret()
			if !sameData(restored.Data, secret.Data) {
				t.Fatal("the lost Secret was regenerated instead of restored from the backup")
			}
			if got := restored.Annotations[rotation.RotatedAtAnnotation]; got != w.now.Format(time.RFC3339) {
				t.Errorf("restored Secret annotation %s = %q, want the restore time", rotation.RotatedAtAnnotation, got)
			}
			w.expectCondition(metav1.ConditionTrue, keystone.ReasonKeysReady)
			if !w.logged("restored key repository from the backend") {
				t.Error("the restore was not logged")
			}
		})
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// checkRestoreExternalSecret asserts the restore ExternalSecret: controlled by the
// Keystone, every property of the remote key into the restore copy, deletionPolicy
// Delete, the effective store, the managed-by label on the copy.
func checkRestoreExternalSecret(t *testing.T, w *world, es *esov1.ExternalSecret) {
	t.Helper()
	if !metav1.IsControlledBy(es, w.k) {
		t.Error("the restore ExternalSecret is not controlled by the Keystone")
	}
	spec := es.Spec
	if spec.Target.Name != w.restoreKey().Name || spec.Target.DeletionPolicy != esov1.DeletionPolicyDelete {
		t.Errorf("target = %+v, want %s with deletionPolicy Delete", spec.Target, w.restoreKey().Name)
	}
	if len(spec.DataFrom) != 1 || spec.DataFrom[0].Extract == nil || spec.DataFrom[0].Extract.Key != w.step.RemoteKey(w.k) || len(spec.Data) != 0 {
		t.Errorf("dataFrom = %+v, data = %+v; want one extract of %s", spec.DataFrom, spec.Data, w.step.RemoteKey(w.k))
	}
	if want := "openstack/keystone/" + w.ns + "/keystone/" + w.kind.name + "-keys"; w.step.RemoteKey(w.k) != want {
		t.Errorf("remote key = %q, want %q", w.step.RemoteKey(w.k), want)
	}
	if spec.SecretStoreRef.Name != secrets.OpenBaoClusterStoreName || spec.SecretStoreRef.Kind != string(commonv1.ClusterSecretStoreKind) {
		t.Errorf("store = %+v, want the ClusterSecretStore %s", spec.SecretStoreRef, secrets.OpenBaoClusterStoreName)
	}
	if spec.Target.Template == nil || spec.Target.Template.Metadata.Labels[apply.ManagedByLabel] != fieldManager {
		t.Errorf("the restore copy does not get the managed-by label: %+v", spec.Target.Template)
	}
}

// checkPushSecret asserts the backup PushSecret: controlled by the Keystone, the whole
// Secret to the remote key, Replace (every rotation is backed up), deletionPolicy None.
func checkPushSecret(t *testing.T, w *world) {
	t.Helper()
	ps := &esov1alpha1.PushSecret{}
	if err := env.Client.Get(context.Background(), w.pushKey(), ps); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(ps, w.k) {
		t.Error("the PushSecret is not controlled by the Keystone")
	}
	spec := ps.Spec
	if spec.Selector.Secret == nil || spec.Selector.Secret.Name != w.secretKey().Name {
		t.Errorf("selector = %+v, want Secret %s", spec.Selector, w.secretKey().Name)
	}
	if len(spec.Data) != 1 || spec.Data[0].Match.SecretKey != "" || spec.Data[0].Match.RemoteRef.RemoteKey != w.step.RemoteKey(w.k) {
		t.Errorf("data = %+v, want the whole Secret to %s", spec.Data, w.step.RemoteKey(w.k))
	}
	if spec.UpdatePolicy != esov1alpha1.PushSecretUpdatePolicyReplace || spec.DeletionPolicy != esov1alpha1.PushSecretDeletionPolicyNone {
		t.Errorf("updatePolicy %q, deletionPolicy %q; want Replace, None", spec.UpdatePolicy, spec.DeletionPolicy)
	}
	want := secrets.PushSecretStoreRefs(secrets.EffectiveStoreRef(w.k.Spec.SecretStoreRef))
	if !slices.Equal(spec.SecretStoreRefs, want) {
		t.Errorf("store refs = %+v, want %+v", spec.SecretStoreRefs, want)
	}
}

// checkCronJob asserts the rotation CronJob: controlled by the Keystone, hourly, one run
// at a time, the operator image running rotate-keys for the Secret.
func checkCronJob(t *testing.T, w *world, maxActiveKeys int, interval string) *batchv1.CronJob {
	t.Helper()
	cj := &batchv1.CronJob{}
	if err := env.Client.Get(context.Background(), w.cronKey(), cj); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(cj, w.k) {
		t.Error("the CronJob is not controlled by the Keystone")
	}
	if cj.Name != "keystone-"+w.kind.name+"-rotate" {
		t.Errorf("CronJob name %q", cj.Name)
	}
	if cj.Spec.Schedule != "17 * * * *" || cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("schedule %q, concurrencyPolicy %q", cj.Spec.Schedule, cj.Spec.ConcurrencyPolicy)
	}
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("containers = %+v", pod.Containers)
	}
	wantArgs := []string{"rotate-keys", "--secret", w.secretKey().String(), "--max-active-keys",
		strconv.Itoa(maxActiveKeys), "--interval", interval}
	if c := pod.Containers[0]; c.Image != operatorImage || !slices.Equal(c.Args, wantArgs) || len(c.Command) != 0 {
		t.Errorf("container image %q command %v args %v; want %q, the image's entrypoint, %v", c.Image, c.Command, c.Args, operatorImage, wantArgs)
	}
	if pod.ServiceAccountName != rotateSA {
		t.Errorf("serviceAccountName %q, want %q", pod.ServiceAccountName, rotateSA)
	}
	return cj
}

// TestKeysRestoredFromBackup: a namespace re-created from a backup (the Keystone comes
// back, the Secrets do not). The step waits for ESO and restores the repository the
// backend holds, rotated keys included, and never generates one; the backup is pushed
// back unchanged.
func TestKeysRestoredFromBackup(t *testing.T) {
	for _, kd := range kinds {
		t.Run(kd.name, func(t *testing.T) {
			w := newWorld(t, kd, nil)
			held := newRepository(t, 4, 3) // indices 0, 4, 5
			w.bao.Set(w.step.RemoteKey(w.k), held.SecretData())
			for range 2 {
				res, err := w.pass()
				if err != nil || res.RequeueAfter != secrets.PollInterval {
					t.Fatalf("pass before ESO synced = %v, %v; want a requeue", res, err)
				}
				w.expectCondition(metav1.ConditionFalse, keystone.ReasonWaitingForKeyRestore)
				expectAbsent(t, w.secretKey(), &corev1.Secret{})
				w.bao.push(t, w.pushKey()) // no PushSecret yet: nothing is pushed
			}
			w.bao.sync(t, w.restoreKey())
			if res, err := w.pass(); err != nil || !res.IsZero() {
				t.Fatalf("pass after ESO synced = %v, %v", res, err)
			}
			s, _ := w.secret()
			if !sameData(s.Data, held.SecretData()) {
				t.Fatal("the Secret does not hold the backend's repository")
			}
			w.expectCondition(metav1.ConditionTrue, keystone.ReasonKeysReady, "3 active", "primary 5")
			w.eso()
			if got, _ := w.bao.Get(w.step.RemoteKey(w.k)); len(got) != 3 || got["5"] != string(held[5]) || got["4"] != string(held[4]) || got["0"] != string(held[0]) {
				t.Error("the backend's repository changed after the restore")
			}
		})
	}
}

// TestKeysRestoreDecision: with the Secret and the restore copy missing, what the
// ExternalSecrets that write the restore copy report decides between waiting and
// generating, by the rules of secrets.EnsureGeneratedSecret.
func TestKeysRestoreDecision(t *testing.T) {
	cases := map[string]struct {
		setup   func(t *testing.T, w *world)
		wantGen bool
		why     string // in the WaitingForKeyRestore message
	}{
		"not synced yet": {why: "has not synced yet"},
		"backend unreachable (SecretSyncedError)": {
			setup: func(t *testing.T, w *world) {
				if _, err := simulate.MarkExternalSecretNotSynced(context.Background(), env.Client, w.restoreKey(), esov1.ConditionReasonSecretSyncedError); err != nil {
					t.Fatal(err)
				}
			},
			why: "Ready=False (reason SecretSyncedError)",
		},
		"Ready=True of an older generation": {
			setup: func(t *testing.T, w *world) {
				setESStatus(t, w.restoreKey(), corev1.ConditionTrue, esov1.ConditionReasonSecretDeleted, -1, time.Now())
			},
			why: "not for the current generation",
		},
		"status from before the object was created": {
			setup: func(t *testing.T, w *world) {
				setESStatus(t, w.restoreKey(), corev1.ConditionTrue, esov1.ConditionReasonSecretDeleted, 0, time.Now().Add(-time.Hour))
			},
			why: "from before it was created",
		},
		"SecretSynced, but the restore copy was deleted after the sync": {
			setup: func(t *testing.T, w *world) {
				w.bao.Set(w.step.RemoteKey(w.k), newRepository(t, 0, 3).SecretData())
				w.bao.sync(t, w.restoreKey())
				if err := env.Client.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
					Name: w.restoreKey().Name, Namespace: w.ns}}); err != nil {
					t.Fatal(err)
				}
			},
			why: "deleted after the sync",
		},
		"another ExternalSecret writing the restore copy has not answered": {
			setup: func(t *testing.T, w *world) {
				w.bao.sync(t, w.restoreKey()) // ours answered: nothing
				other := &esov1.ExternalSecret{
					ObjectMeta: metav1.ObjectMeta{Name: "restore-by-hand", Namespace: w.ns},
					Spec: esov1.ExternalSecretSpec{
						SecretStoreRef: secrets.ESOSecretStoreRef(secrets.EffectiveStoreRef(nil)),
						Target:         esov1.ExternalSecretTarget{Name: w.restoreKey().Name},
						DataFrom:       []esov1.ExternalSecretDataFromRemoteRef{{Extract: &esov1.ExternalSecretDataRemoteRef{Key: "elsewhere"}}},
					},
				}
				if err := env.Client.Create(context.Background(), other); err != nil {
					t.Fatal(err)
				}
			},
			why: "restore-by-hand",
		},
		"backend holds nothing: SecretDeleted": {
			setup:   func(t *testing.T, w *world) { w.bao.sync(t, w.restoreKey()) },
			wantGen: true,
		},
		"backend holds nothing: SecretSynced with an empty restore copy": {
			setup: func(t *testing.T, w *world) {
				if _, err := simulate.MarkExternalSecretSynced(context.Background(), env.Client, w.restoreKey(), map[string][]byte{}); err != nil {
					t.Fatal(err)
				}
			},
			wantGen: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, fernet, nil)
			if res, err := w.pass(); err != nil || res.RequeueAfter == 0 {
				t.Fatalf("first pass = %v, %v", res, err)
			}
			if tc.setup != nil {
				tc.setup(t, w)
			}
			for pass := range 2 {
				res, err := w.pass()
				if err != nil {
					t.Fatalf("pass %d: %v", pass+1, err)
				}
				if tc.wantGen {
					if !res.IsZero() {
						t.Fatalf("pass %d = %v, want done", pass+1, res)
					}
					w.expectCondition(metav1.ConditionTrue, keystone.ReasonKeysReady, "2 active")
					continue
				}
				if res.RequeueAfter != secrets.PollInterval {
					t.Fatalf("pass %d = %v, want a requeue after %s", pass+1, res, secrets.PollInterval)
				}
				w.expectCondition(metav1.ConditionFalse, keystone.ReasonWaitingForKeyRestore, tc.why)
				expectAbsent(t, w.secretKey(), &corev1.Secret{})
			}
		})
	}
}

// TestKeysInvalidSecretUntouched: an existing Secret that does not hold a valid
// repository is never overwritten, backed up or rotated: KeysInvalid names the Secret
// and the index (never a key), and the error is terminal.
func TestKeysInvalidSecretUntouched(t *testing.T) {
	valid := newRepository(t, 0, 3)
	cases := map[string]struct {
		data map[string][]byte
		want string
	}{
		"a key that is not a fernet key": {
			data: map[string][]byte{"0": valid[0], "1": []byte("short-but-secret-value")},
			want: "key 1: 22 characters",
		},
		"no primary key": {data: map[string][]byte{"0": valid[0]}, want: "no primary key"},
		"a data key that is not an index": {
			data: map[string][]byte{"0": valid[0], "1": valid[1], "01": valid[1]},
			want: `data key "01"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			w := newWorld(t, fernet, nil)
			w.remember(tc.data)
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: w.secretKey().Name, Namespace: w.ns}, Data: tc.data}
			if err := apply.SetOwnership(env.Client, env.Scheme, w.k, s); err != nil {
				t.Fatal(err)
			}
			if err := env.Client.Create(ctx, s); err != nil {
				t.Fatal(err)
			}
			for pass := range 2 {
				testenv.ExpectUnchanged(t, env.Client, w.k, func(context.Context) error {
					res, err := w.pass()
					if !res.IsZero() || !reconcile.IsTerminal(err) || !errors.Is(err, keys.ErrInvalidRepository) {
						t.Fatalf("pass %d = %v, %v; want a terminal error wrapping keys.ErrInvalidRepository", pass+1, res, err)
					}
					if !strings.Contains(err.Error(), w.secretKey().String()) {
						t.Errorf("error %q does not name the Secret", err)
					}
					return nil
				}, &corev1.SecretList{}, &esov1alpha1.PushSecretList{}, &batchv1.CronJobList{})
				w.expectCondition(metav1.ConditionFalse, keystone.ReasonKeysInvalid, w.secretKey().String(), tc.want, "never overwritten")
			}
			got, _ := w.secret()
			if !sameData(got.Data, tc.data) {
				t.Error("the invalid Secret was changed")
			}
			expectAbsent(t, w.pushKey(), &esov1alpha1.PushSecret{})
			expectAbsent(t, w.cronKey(), &batchv1.CronJob{})
		})
	}
}

// TestKeysInvalidBackupNotReplaced: a backup that is not a valid repository is not
// restored and not replaced by a generated one (the PushSecret would overwrite it):
// KeysInvalid names the restore copy, and the step polls until the backup is repaired.
func TestKeysInvalidBackupNotReplaced(t *testing.T) {
	w := newWorld(t, credential, nil)
	broken := map[string][]byte{"0": []byte("broken-backup-key-material-0123456789")}
	w.remember(broken)
	w.bao.Set(w.step.RemoteKey(w.k), broken)
	if _, err := w.pass(); err != nil {
		t.Fatal(err)
	}
	w.bao.sync(t, w.restoreKey())
	for range 2 {
		res, err := w.pass()
		if err != nil || res.RequeueAfter != secrets.PollInterval {
			t.Fatalf("pass = %v, %v; want a requeue after %s", res, err, secrets.PollInterval)
		}
		w.expectCondition(metav1.ConditionFalse, keystone.ReasonKeysInvalid, w.restoreKey().String(), "key 0", "no primary key")
		expectAbsent(t, w.secretKey(), &corev1.Secret{})
		expectAbsent(t, w.pushKey(), &esov1alpha1.PushSecret{})
	}
	repaired := newRepository(t, 1, 3)
	w.bao.Set(w.step.RemoteKey(w.k), repaired.SecretData())
	w.bao.sync(t, w.restoreKey())
	if res, err := w.pass(); err != nil || !res.IsZero() {
		t.Fatalf("pass after the repair = %v, %v", res, err)
	}
	if s, _ := w.secret(); !sameData(s.Data, repaired.SecretData()) {
		t.Error("the repaired backup was not restored")
	}
}

// TestUnsafeRotationRefused: rotation settings that would remove a key a valid token
// still needs are refused before anything is written: UnsafeRotation names the numbers
// and the smallest safe maxActiveKeys, and a CronJob made for earlier, safe settings
// keeps them.
func TestUnsafeRotationRefused(t *testing.T) {
	unsafe := func(kd kind, maxActive int32) func(k *v1alpha1.Keystone) {
		return func(k *v1alpha1.Keystone) {
			k.Spec.Token.Expiration = &metav1.Duration{Duration: 24 * time.Hour}
			k.Spec.Token.AllowExpiredWindow = &metav1.Duration{Duration: 48 * time.Hour}
			spec := kd.spec(k)
			spec.RotationInterval = &metav1.Duration{Duration: 24 * time.Hour}
			spec.MaxActiveKeys = maxActive
		}
	}
	for _, kd := range kinds {
		t.Run(kd.name+"/nothing created", func(t *testing.T) {
			w := newWorld(t, kd, unsafe(kd, 3))
			for range 2 {
				res, err := w.pass()
				if !res.IsZero() || !reconcile.IsTerminal(err) || !errors.Is(err, keys.ErrUnsafeRotation) {
					t.Fatalf("pass = %v, %v; want a terminal error wrapping keys.ErrUnsafeRotation", res, err)
				}
				w.expectCondition(metav1.ConditionFalse, keystone.ReasonUnsafeRotation,
					"maxActiveKeys 3", "every 24h0m0s", "token expiration 24h0m0s", "allow-expired window 48h0m0s",
					"must be at least 5", "spec."+kd.name)
			}
			expectAbsent(t, w.restoreKey(), &esov1.ExternalSecret{})
			expectAbsent(t, w.secretKey(), &corev1.Secret{})
			expectAbsent(t, w.pushKey(), &esov1alpha1.PushSecret{})
			expectAbsent(t, w.cronKey(), &batchv1.CronJob{})
		})
	}

	t.Run("fernet/safe, then lowered", func(t *testing.T) {
		ctx := context.Background()
		w := newWorld(t, fernet, unsafe(fernet, 5))
		w.converge()
		w.expectCondition(metav1.ConditionTrue, keystone.ReasonKeysReady)
		checkCronJob(t, w, 5, "24h")
		w.k.Spec.Fernet.MaxActiveKeys = 4
		if err := env.Client.Update(ctx, w.k); err != nil {
			t.Fatal(err)
		}
		testenv.ExpectUnchanged(t, env.Client, w.k, func(context.Context) error {
			if res, err := w.pass(); !res.IsZero() || !reconcile.IsTerminal(err) {
				t.Fatalf("pass = %v, %v; want a terminal error", res, err)
			}
			return nil
		}, childLists()...)
		w.expectCondition(metav1.ConditionFalse, keystone.ReasonUnsafeRotation, "maxActiveKeys 4", "at least 5")
		checkCronJob(t, w, 5, "24h")
	})

	t.Run("credential/interval not positive", func(t *testing.T) {
		w := newWorld(t, credential, func(k *v1alpha1.Keystone) {
			k.Spec.Credential.RotationInterval = &metav1.Duration{}
		})
		res, err := w.pass()
		if !res.IsZero() || !reconcile.IsTerminal(err) || !errors.Is(err, keys.ErrInvalidRotationSettings) {
			t.Fatalf("pass = %v, %v; want a terminal error wrapping keys.ErrInvalidRotationSettings", res, err)
		}
		w.expectCondition(metav1.ConditionFalse, keystone.ReasonInvalidRotationSettings, "not positive")
		expectAbsent(t, w.restoreKey(), &esov1.ExternalSecret{})
	})
}

// TestForeignObjectsRefused: a Secret of the repository's name that the Keystone does
// not control (made by kubectl, or controlled by another object) or that is being
// deleted is refused and left as it is; so is a CronJob of the rotation's name. An
// unclaimed Secret marked for adoption that holds a valid repository is adopted with
// its keys; one that does not is refused as invalid and not adopted.
func TestForeignObjectsRefused(t *testing.T) {
	ctx := context.Background()
	foreignSecret := func(t *testing.T, w *world, mutate func(*corev1.Secret)) *corev1.Secret {
		t.Helper()
		data := newRepository(t, 1, 3).SecretData()
		w.remember(data)
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: w.secretKey().Name, Namespace: w.ns}, Data: data}
		if mutate != nil {
			mutate(s)
		}
		if err := env.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	refused := func(t *testing.T, w *world, want error, parts ...string) {
		t.Helper()
		before, _ := w.secret()
		res, err := w.pass()
		if !res.IsZero() || !errors.Is(err, want) || reconcile.IsTerminal(err) {
			t.Fatalf("pass = %v, %v; want a retried error wrapping %v", res, err, want)
		}
		w.expectCondition(metav1.ConditionFalse, keystone.ReasonKeysNotControlled, parts...)
		if after, _ := w.secret(); after.ResourceVersion != before.ResourceVersion {
			t.Error("the refused Secret was written")
		}
		expectAbsent(t, w.pushKey(), &esov1alpha1.PushSecret{})
	}

	t.Run("made by kubectl", func(t *testing.T) {
		w := newWorld(t, fernet, nil)
		foreignSecret(t, w, nil)
		refused(t, w, apply.ErrNotControlled, w.secretKey().String())
	})
	t.Run("controlled by another object", func(t *testing.T) {
		w := newWorld(t, fernet, nil)
		other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "someone-else", Namespace: w.ns}}
		if err := env.Client.Create(ctx, other); err != nil {
			t.Fatal(err)
		}
		foreignSecret(t, w, func(s *corev1.Secret) {
			if err := apply.SetOwnership(env.Client, env.Scheme, other, s); err != nil {
				t.Fatal(err)
			}
		})
		refused(t, w, apply.ErrNotControlled, "someone-else")
	})
	t.Run("being deleted", func(t *testing.T) {
		w := newWorld(t, fernet, nil)
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: w.secretKey().Name, Namespace: w.ns}, Data: newRepository(t, 0, 3).SecretData()}
		w.remember(s.Data)
		if err := apply.SetOwnership(env.Client, env.Scheme, w.k, s); err != nil {
			t.Fatal(err)
		}
		env.CreateBeingDeleted(t, s)
		refused(t, w, apply.ErrBeingDeleted, w.secretKey().String())
	})
	t.Run("rotation CronJob made by kubectl", func(t *testing.T) {
		w := newWorld(t, credential, nil)
		cj := &batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Name: w.cronKey().Name, Namespace: w.ns},
			Spec: batchv1.CronJobSpec{Schedule: "0 0 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "mine", Image: "busybox"}}}},
			}}},
		}
		if err := env.Client.Create(ctx, cj); err != nil {
			t.Fatal(err)
		}
		if _, err := w.pass(); err != nil {
			t.Fatal(err)
		}
		w.bao.sync(t, w.restoreKey())
		res, err := w.pass()
		if !res.IsZero() || !errors.Is(err, apply.ErrNotControlled) {
			t.Fatalf("pass = %v, %v; want an error wrapping apply.ErrNotControlled", res, err)
		}
		w.expectCondition(metav1.ConditionFalse, keystone.ReasonKeysNotControlled, "CronJob", w.cronKey().String())
		got := &batchv1.CronJob{}
		if err := env.Client.Get(ctx, w.cronKey(), got); err != nil {
			t.Fatal(err)
		}
		if got.Spec.Schedule != "0 0 * * *" || got.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Name != "mine" {
			t.Error("the foreign CronJob was overwritten")
		}
	})
	t.Run("adopted on consent", func(t *testing.T) {
		w := newWorld(t, fernet, nil)
		s := foreignSecret(t, w, func(s *corev1.Secret) {
			s.Annotations = map[string]string{apply.AdoptAnnotation: "true"}
		})
		if res, err := w.pass(); err != nil || !res.IsZero() {
			t.Fatalf("pass = %v, %v; want done (an existing Secret needs no restore)", res, err)
		}
		got, _ := w.secret()
		if !metav1.IsControlledBy(got, w.k) || got.Labels[apply.ManagedByLabel] != fieldManager {
			t.Errorf("the Secret was not adopted: owners %+v, labels %v", got.OwnerReferences, got.Labels)
		}
		if !sameData(got.Data, s.Data) {
			t.Error("adoption changed the keys")
		}
		if got.Annotations[rotation.RotatedAtAnnotation] != t0.Format(time.RFC3339) {
			t.Errorf("adopted Secret annotation %s = %q, want the adoption time", rotation.RotatedAtAnnotation, got.Annotations[rotation.RotatedAtAnnotation])
		}
		w.expectCondition(metav1.ConditionTrue, keystone.ReasonKeysReady, "3 active")
	})
	t.Run("marked for adoption but invalid", func(t *testing.T) {
		w := newWorld(t, fernet, nil)
		foreignSecret(t, w, func(s *corev1.Secret) {
			s.Annotations = map[string]string{apply.AdoptAnnotation: "true"}
			delete(s.Data, "0")
		})
		res, err := w.pass()
		if !res.IsZero() || !reconcile.IsTerminal(err) {
			t.Fatalf("pass = %v, %v; want a terminal error", res, err)
		}
		w.expectCondition(metav1.ConditionFalse, keystone.ReasonKeysInvalid, "no staged key 0")
		if got, _ := w.secret(); len(got.OwnerReferences) != 0 {
			t.Error("an invalid repository was adopted")
		}
	})
}

// TestKeysOnSecretStore: a Keystone that selects a SecretStore backs up to and
// restores from that store.
func TestKeysOnSecretStore(t *testing.T) {
	w := newWorld(t, fernet, func(k *v1alpha1.Keystone) {
		k.Spec.SecretStoreRef = &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "openbao"}
	})
	w.converge()
	es := &esov1.ExternalSecret{}
	if err := env.Client.Get(context.Background(), w.restoreKey(), es); err != nil {
		t.Fatal(err)
	}
	if es.Spec.SecretStoreRef.Kind != string(commonv1.SecretStoreKind) || es.Spec.SecretStoreRef.Name != "openbao" {
		t.Errorf("restore store = %+v, want SecretStore openbao", es.Spec.SecretStoreRef)
	}
	checkPushSecret(t, w)
}

// TestKeysLabelsRestored: labels of the repository Secret that another client changed
// or removed are set back by the next pass in a patch of the labels alone (the keys
// stay as they are, another client's label stays), and the pass after it writes
// nothing.
func TestKeysLabelsRestored(t *testing.T) {
	for _, kd := range kinds {
		t.Run(kd.name, func(t *testing.T) {
			ctx := context.Background()
			w := newWorld(t, kd, nil)
			w.converge()
			secret, _ := w.secret()
			want, data := maps.Clone(secret.Labels), secret.Data
			drifted := secret.DeepCopy()
			drifted.Labels["app.kubernetes.io/component"] = "drifted"
			delete(drifted.Labels, "app.kubernetes.io/instance")
			drifted.Labels["example.com/other"] = "kept"
			if err := env.Client.Update(ctx, drifted); err != nil {
				t.Fatal(err)
			}

			res, writes, err := w.passWrites()
			if err != nil || !res.IsZero() {
				t.Fatalf("pass after the drift = %v, %v; want done", res, err)
			}
			if got := testenv.WriteStrings(writes); len(got) != 1 || !strings.Contains(got[0], w.secretKey().Name) {
				t.Errorf("pass after the drift wrote %v, want the Secret's labels alone", got)
			}
			secret, _ = w.secret()
			for name, value := range want {
				if secret.Labels[name] != value {
					t.Errorf("label %s = %q, want %q restored", name, secret.Labels[name], value)
				}
			}
			if secret.Labels["example.com/other"] != "kept" {
				t.Errorf("another client's label was removed: %v", secret.Labels)
			}
			if !sameData(secret.Data, data) {
				t.Error("the repository changed when its labels were restored")
			}
			if !w.logged("restored the labels of key repository Secret") {
				t.Error("the label repair was not logged")
			}
			if res, writes, err := w.passWrites(); err != nil || !res.IsZero() || len(writes) > 0 {
				t.Errorf("pass after the repair = %v, %v, wrote %v; want done and no write", res, err, testenv.WriteStrings(writes))
			}

			// A failed repair shows: the condition turns False and the error is
			// returned; the next pass repairs.
			drifted, _ = w.secret()
			drifted.Labels["app.kubernetes.io/component"] = "drifted"
			if err := env.Client.Update(ctx, drifted); err != nil {
				t.Fatal(err)
			}
			injected := errors.New("injected patch failure")
			failing := failingPatches{Client: env.Client, err: injected}
			if res, err := w.passWith(ctx, failing); !errors.Is(err, injected) || !res.IsZero() {
				t.Fatalf("pass with a failing patch = %v, %v; want the injected error alone", res, err)
			}
			w.expectCondition(metav1.ConditionFalse, keystone.ReasonKeysLabelsNotRestored,
				"restore labels of Secret "+w.secretKey().String())
			if res, err := w.pass(); err != nil || !res.IsZero() {
				t.Fatalf("pass after the failed repair = %v, %v; want done", res, err)
			}
			w.expectCondition(metav1.ConditionTrue, keystone.ReasonKeysReady)
			if secret, _ = w.secret(); secret.Labels["app.kubernetes.io/component"] != want["app.kubernetes.io/component"] {
				t.Errorf("label not restored after the failed repair: %v", secret.Labels)
			}
		})
	}
}

// failingPatches is a client whose every Patch fails with err.
type failingPatches struct {
	client.Client
	err error
}

// Patch returns err and sends nothing for a merge patch (the labels repair); other
// patches (the take-over of a created child's managedFields entry) go through.
func (c failingPatches) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if patch.Type() != types.MergePatchType {
		return c.Client.Patch(ctx, obj, patch, opts...)
	}
	return c.err
}
