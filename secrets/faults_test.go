package secrets_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// adminPush is where the tests push identity's admin password.
var adminPush = secrets.GeneratedPush{RemoteKey: "identity/admin", Property: "password"}

const adminRef = "identity/admin/password"

// credentialWorld is one namespace with an owner, a generated credential that
// restores from the synced copy of an ExternalSecret, and a backend.
type credentialWorld struct {
	ns     string
	owner  *corev1.ConfigMap
	gs     secrets.GeneratedSecret
	synced client.ObjectKey
	bao    *backend

	mu          sync.Mutex
	first       string // the first credential ever seen in the generated Secret
	firstInBao  string // the first credential ever seen in the backend
	syncedSeen  bool   // the synced copy has existed
	restoreFrom string // the backend's value before the run ("" on a first install)
}

// newCredentialWorld builds a world. With restore set the generated Secret uses
// RestoreFrom and an ExternalSecret (deletionPolicy Delete) writes the synced copy;
// with backendValue set the backend already holds the credential (a restored
// namespace).
func newCredentialWorld(t *testing.T, restore bool, backendValue string) *credentialWorld {
	t.Helper()
	ns := env.Namespace(t)
	w := &credentialWorld{ns: ns, owner: newOwner(t, ns), bao: newBackend(), restoreFrom: backendValue}
	w.synced = client.ObjectKey{Namespace: ns, Name: "identity-admin"}
	w.gs = secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "identity-admin-source"}, "password")
	if backendValue != "" {
		w.bao.hold(adminRef, backendValue)
	}
	if restore {
		w.gs.RestoreFrom = &w.synced
		es := desiredExternalSecret(ns, w.synced.Name, w.synced.Name, secrets.EffectiveStoreRef(nil))
		es.Spec.Target.DeletionPolicy = esov1.DeletionPolicyDelete
		if err := env.Client.Create(context.Background(), es); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// step is the operator's Secrets step through c: the credential, then its push. While
// the restore is pending it requeues after secrets.PollInterval.
func (w *credentialWorld) step(ctx context.Context, c client.Client) (ctrl.Result, error) {
	outcome, err := secrets.EnsureGeneratedSecret(ctx, c, env.Scheme, w.owner, w.gs)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !outcome.Ready() {
		return ctrl.Result{RequeueAfter: secrets.PollInterval}, nil
	}
	ps, err := secrets.GeneratedPushSecret(w.gs, adminPush)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := secrets.EnsurePushSecret(ctx, c, env.Scheme, w.owner, ps); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// eso runs ESO once over the world: the PushSecret, then the ExternalSecret.
func (w *credentialWorld) eso(t testing.TB) {
	t.Helper()
	w.bao.push(t, w.gs.Key)
	if w.gs.RestoreFrom != nil {
		w.bao.sync(t, w.synced)
	}
}

// check asserts the invariants that hold after every pass: the credential, once
// generated or restored, never changes, in the Secret or in the backend; a credential
// the backend held before the run is the only one ever seen; the owner, the synced
// copy and the ExternalSecret are never deleted.
func (w *credentialWorld) check(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	w.mu.Lock()
	defer w.mu.Unlock()
	s := &corev1.Secret{}
	switch err := env.Client.Get(ctx, w.gs.Key, s); {
	case err == nil:
		v := string(s.Data[w.gs.DataKey])
		if w.first == "" {
			w.first = v
		}
		if v != w.first {
			t.Errorf("the credential was regenerated")
		}
		if w.restoreFrom != "" && v != w.restoreFrom {
			t.Errorf("the generated Secret holds a credential other than the backend's")
		}
	case !apierrors.IsNotFound(err):
		t.Fatal(err)
	case w.first != "":
		t.Errorf("the generated Secret was deleted")
	}
	if v, ok := w.bao.get(adminRef); ok {
		if w.firstInBao == "" {
			w.firstInBao = v
		}
		if v != w.firstInBao {
			t.Errorf("the backend's credential was replaced")
		}
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(w.owner), &corev1.ConfigMap{}); err != nil {
		t.Errorf("owner: %v", err)
	}
	if w.gs.RestoreFrom == nil {
		return
	}
	if err := env.Client.Get(ctx, w.synced, &esov1.ExternalSecret{}); err != nil {
		t.Errorf("ExternalSecret: %v", err)
	}
	switch err := env.Client.Get(ctx, w.synced, &corev1.Secret{}); {
	case err == nil:
		w.syncedSeen = true
	case apierrors.IsNotFound(err) && w.syncedSeen:
		t.Errorf("the synced copy was deleted")
	}
}

// credentialState is the converged world, without what differs between runs.
type credentialState struct {
	Keys            []string
	Length          int
	OwnedByOwner    bool
	Labels          map[string]string
	PushSpec        esov1alpha1.PushSecretSpec
	PushOwned       bool
	BackendHoldsIt  bool
	SyncedHoldsIt   bool
	BackendWrites   int
	RestoredFromBao bool
}

func (w *credentialWorld) state(t *testing.T) any {
	t.Helper()
	ctx := context.Background()
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, w.gs.Key, s); err != nil {
		t.Fatal(err)
	}
	st := credentialState{Length: len(s.Data[w.gs.DataKey]), OwnedByOwner: metav1.IsControlledBy(s, w.owner), Labels: s.Labels}
	for k := range s.Data {
		st.Keys = append(st.Keys, k)
	}
	ps := &esov1alpha1.PushSecret{}
	if err := env.Client.Get(ctx, w.gs.Key, ps); err != nil {
		t.Fatal(err)
	}
	st.PushSpec, st.PushOwned = ps.Spec, metav1.IsControlledBy(ps, w.owner)
	v, _ := w.bao.get(adminRef)
	value := string(s.Data[w.gs.DataKey])
	st.BackendHoldsIt, st.RestoredFromBao = v == value, w.restoreFrom != "" && value == w.restoreFrom
	st.BackendWrites = w.bao.Writes()
	if w.gs.RestoreFrom != nil {
		got, err := secrets.GetSecretValue(ctx, env.Client, w.synced, w.gs.DataKey)
		st.SyncedHoldsIt = err == nil && got == value
	}
	return st
}

// run is the FaultRun of the world: each pass is followed by one round of ESO.
func (w *credentialWorld) run(t *testing.T) faults.Scenario {
	return faults.Scenario{
		Client: env.Client,
		Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
			res, err := w.step(ctx, c)
			w.eso(t)
			return res, err
		},
		Check: w.check,
		State: w.state,
	}
}

// TestFaultMatrixGeneratedSecret fails every API call of the Secrets step (the
// generated credential and its PushSecret), one at a time, with 409, 500, a timeout
// after the write was served and a cancelled context: the step reports it, the
// credential is never regenerated or replaced in the backend, and the next passes
// converge to the fault-free outcome.
func TestFaultMatrixGeneratedSecret(t *testing.T) {
	t.Run("no restore source", func(t *testing.T) {
		faults.Matrix{Setup: func(t *testing.T) faults.Scenario {
			return newCredentialWorld(t, false, "").run(t)
		}}.Run(t)
	})
	t.Run("first install with a restore source", func(t *testing.T) {
		faults.Matrix{Setup: func(t *testing.T) faults.Scenario {
			return newCredentialWorld(t, true, "").run(t)
		}}.Run(t)
	})
	t.Run("restored namespace", func(t *testing.T) {
		faults.Matrix{Setup: func(t *testing.T) faults.Scenario {
			return newCredentialWorld(t, true, "Held0By0The0Backend0Since0Day0One").run(t)
		}}.Run(t)
	})
}

// TestFaultMatrixEnsurePushSecret: the PushSecret alone.
func TestFaultMatrixEnsurePushSecret(t *testing.T) {
	faults.Matrix{Setup: func(t *testing.T) faults.Scenario {
		ns := env.Namespace(t)
		owner := newOwner(t, ns)
		gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "identity-admin-source"}, "password")
		return faults.Scenario{
			Client: env.Client,
			Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
				ps, err := secrets.GeneratedPushSecret(gs, adminPush)
				if err != nil {
					return ctrl.Result{}, err
				}
				return ctrl.Result{}, secrets.EnsurePushSecret(ctx, c, env.Scheme, owner, ps)
			},
			Check: func(t *testing.T) {
				if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(owner), &corev1.ConfigMap{}); err != nil {
					t.Errorf("owner: %v", err)
				}
			},
			State: func(t *testing.T) any {
				ps := &esov1alpha1.PushSecret{}
				if err := env.Client.Get(context.Background(), gs.Key, ps); err != nil {
					t.Fatal(err)
				}
				return []any{ps.Spec, metav1.IsControlledBy(ps, owner)}
			},
		}
	}}.Run(t)
}

// TestFaultMatrixGates: the store gate and the ExternalSecret gate read only; a failed
// read is an error, never a pass.
func TestFaultMatrixGates(t *testing.T) {
	t.Run("GateStoreReady", func(t *testing.T) {
		faults.Matrix{Setup: func(t *testing.T) faults.Scenario {
			ns := env.Namespace(t)
			createStore(t, ns, "tenant-bao", false)
			ref := commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"}
			var conds []metav1.Condition
			return faults.Scenario{
				Client: env.Client,
				Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
					ok, err := secrets.GateStoreReady(ctx, c, ref, ns, false, &conds, 1, condSecretsReady)
					switch {
					case err != nil:
						return ctrl.Result{}, err
					case !ok:
						// ESO validates the store meanwhile.
						if _, err := simulate.MarkSecretStoreReady(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: "tenant-bao"}); err != nil {
							t.Fatal(err)
						}
						return ctrl.Result{RequeueAfter: secrets.PollInterval}, nil
					}
					meta.SetStatusCondition(&conds, metav1.Condition{Type: condSecretsReady, Status: metav1.ConditionTrue,
						Reason: "SecretsAvailable", ObservedGeneration: 1})
					return ctrl.Result{}, nil
				},
				State: func(t *testing.T) any {
					c := secretsCond(conds)
					return []any{c.Status, c.Reason, c.Message}
				},
			}
		}}.Run(t)
	})
	t.Run("WaitForExternalSecret", func(t *testing.T) {
		faults.Matrix{Setup: func(t *testing.T) faults.Scenario {
			ns := env.Namespace(t)
			key := client.ObjectKey{Namespace: ns, Name: "identity-admin"}
			if err := env.Client.Create(context.Background(), desiredExternalSecret(ns, key.Name, key.Name, secrets.EffectiveStoreRef(nil))); err != nil {
				t.Fatal(err)
			}
			return faults.Scenario{
				Client: env.Client,
				Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
					exists, ready, err := secrets.WaitForExternalSecret(ctx, c, key)
					switch {
					case err != nil:
						return ctrl.Result{}, err
					case !exists || !ready:
						if _, err := simulate.MarkExternalSecretSynced(ctx, env.Client, key, map[string][]byte{"password": []byte("pw")}); err != nil {
							t.Fatal(err)
						}
						return ctrl.Result{RequeueAfter: secrets.PollInterval}, nil
					}
					return ctrl.Result{}, nil
				},
			}
		}}.Run(t)
	})
}

// TestFaultMatrixStoreRefFanOut: a store event whose List fails enqueues nothing
// (the map function cannot return an error); the caller sees too few requests and the
// next event maps them all.
func TestFaultMatrixStoreRefFanOut(t *testing.T) {
	faults.Matrix{Setup: func(t *testing.T) faults.Scenario {
		ns := env.Namespace(t)
		ref := &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"}
		createCR(t, ns, "dashboard", ref)
		createCR(t, ns, "identity", ref)
		createCR(t, ns, "glance", nil)
		store := &esov1.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-bao"}}
		var got []string
		return faults.Scenario{
			Client: env.Client,
			Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
				reqs := configMapFanOut(c, commonv1.SecretStoreKind)(ctx, store)
				got = got[:0]
				for _, r := range reqs {
					got = append(got, r.Name)
				}
				if len(reqs) != 2 {
					return ctrl.Result{RequeueAfter: secrets.PollInterval}, nil
				}
				return ctrl.Result{}, nil
			},
			Check: func(t *testing.T) {
				cms := &corev1.ConfigMapList{}
				if err := env.Client.List(context.Background(), cms, client.InNamespace(ns), client.MatchingLabels{"fanout": "cr"}); err != nil || len(cms.Items) != 3 {
					t.Errorf("CRs: %d, %v; want 3", len(cms.Items), err)
				}
			},
			State: func(t *testing.T) any { return got },
		}
	}}.Run(t)
}

// TestKilledBetweenGenerateAndPush stops a pass after the credential was generated and
// before its PushSecret was applied (the manager shuts down: the apply meets a
// cancelled context). A restarted manager's pass keeps the credential and pushes it.
func TestKilledBetweenGenerateAndPush(t *testing.T) {
	ctx := context.Background()
	w := newCredentialWorld(t, false, "")
	inj := faults.NewInjector()
	inj.Arm(faults.VerbApply, 1, faults.Canceled)
	res, err := w.step(ctx, inj.Client(env.Client))
	if !errors.Is(err, context.Canceled) || !res.IsZero() {
		t.Fatalf("killed pass = %+v, %v; want context.Canceled", res, err)
	}
	w.check(t)
	if w.first == "" {
		t.Fatal("the killed pass did not get as far as generating the credential")
	}
	if err := env.Client.Get(ctx, w.gs.Key, &esov1alpha1.PushSecret{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the PushSecret exists after the killed pass: %v", err)
	}
	w.eso(t)
	if _, ok := w.bao.get(adminRef); ok {
		t.Fatal("something was pushed before the PushSecret existed")
	}

	restarted, err := client.New(env.Config, client.Options{Scheme: testenv.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := w.step(ctx, restarted); err != nil || !res.IsZero() {
		t.Fatalf("pass after restart = %+v, %v", res, err)
	}
	w.eso(t)
	w.check(t)
	if v, _ := w.bao.get(adminRef); v != w.first {
		t.Error("the backend does not hold the credential generated before the kill")
	}
}

// TestTwoManagersOneCredential runs the Secrets step in two managers at once (a
// leader-election overlap), each with its own client, for several rounds: the first
// install, losses of the generated Secret, and a restore that is pending until ESO
// syncs. Exactly one credential is ever generated and both managers always read it.
func TestTwoManagersOneCredential(t *testing.T) {
	ctx := context.Background()
	w := newCredentialWorld(t, true, "")
	var managers [2]client.Client
	for i := range managers {
		c, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		managers[i] = c
	}
	seen := map[string]bool{} // every credential a manager read
	// round runs the step in both managers at once and returns what each read back.
	round := func(name string) (outcomes [2]ctrl.Result, values [2]string) {
		t.Helper()
		var wg sync.WaitGroup
		var errs [2]error
		start := make(chan struct{})
		for i, c := range managers {
			wg.Go(func() {
				<-start
				outcomes[i], errs[i] = w.step(ctx, c)
				if errs[i] == nil && outcomes[i].IsZero() {
					values[i], errs[i] = secrets.GetSecretValue(ctx, c, w.gs.Key, w.gs.DataKey)
				}
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s: manager %d: %v", name, i, err)
			}
		}
		w.check(t)
		for _, v := range values {
			if v != "" {
				seen[v] = true
			}
		}
		return outcomes, values
	}

	// First install: the ExternalSecret has not synced; both wait.
	res, _ := round("first install, before ESO")
	if res[0].IsZero() || res[1].IsZero() {
		t.Fatalf("a manager went ahead before ESO answered: %+v", res)
	}
	w.eso(t) // the backend lacks the key: Ready=True, SecretDeleted
	res, values := round("first install")
	if !res[0].IsZero() || !res[1].IsZero() || values[0] != values[1] || values[0] == "" {
		t.Fatalf("first install: %+v; the managers read different credentials or none", res)
	}
	value := values[0]
	w.eso(t)

	for r := range 3 {
		// The generated Secret is lost; the synced copy still holds the credential.
		if err := env.Client.Delete(ctx, secretObject(w.gs.Key)); err != nil {
			t.Fatal(err)
		}
		res, values := round("after losing the generated Secret")
		if !res[0].IsZero() || !res[1].IsZero() || values[0] != value || values[1] != value {
			t.Fatalf("round %d: %+v; a manager read a credential other than the first", r+1, res)
		}
		w.eso(t)
	}

	// Both Secrets are lost and the ExternalSecret is re-created (a restored
	// namespace): both managers wait until ESO syncs, then restore.
	for _, obj := range []client.Object{secretObject(w.gs.Key), secretObject(w.synced),
		&esov1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: w.synced.Name}}} {
		if err := env.Client.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	w.mu.Lock()
	w.first, w.syncedSeen = "", false // the deletions above were the test's own
	w.restoreFrom = value
	w.mu.Unlock()
	es := desiredExternalSecret(w.ns, w.synced.Name, w.synced.Name, secrets.EffectiveStoreRef(nil))
	es.Spec.Target.DeletionPolicy = esov1.DeletionPolicyDelete
	if err := env.Client.Create(ctx, es); err != nil {
		t.Fatal(err)
	}
	res, _ = round("restored namespace, before ESO")
	if res[0].IsZero() || res[1].IsZero() {
		t.Fatalf("a manager went ahead before ESO synced: %+v", res)
	}
	w.eso(t)
	res, values = round("restored namespace")
	if !res[0].IsZero() || !res[1].IsZero() || values[0] != value || values[1] != value {
		t.Fatalf("restored namespace: %+v; a manager read a credential other than the first", res)
	}
	if len(seen) != 1 {
		t.Errorf("the managers read %d different credentials, want 1", len(seen))
	}
}
