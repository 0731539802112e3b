package secrets_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// pushWorld is one namespace with an owner, the source Secret it controls and the
// PushSecret that backs it up.
type pushWorld struct {
	ns     string
	owner  *corev1.ConfigMap
	source client.ObjectKey
}

func newPushWorld(t *testing.T) *pushWorld {
	t.Helper()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	s := createOwnedSecret(t, owner, "identity-db", map[string][]byte{"password": []byte("Password0Before0Any0Rotation00")})
	return &pushWorld{ns: ns, owner: owner, source: client.ObjectKeyFromObject(s)}
}

// secret reads the source Secret from the API server.
func (w *pushWorld) secret(t testing.TB) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), w.source, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// confirm is one pass: the PushSecret of the source Secret as read now.
func (w *pushWorld) confirm(t testing.TB, c client.Client) (secrets.PushConfirmation, *esov1alpha1.PushSecret, error) {
	t.Helper()
	ps := desiredPushSecret(w.ns, w.source.Name, secrets.EffectiveStoreRef(nil))
	got, err := secrets.ConfirmPush(context.Background(), c, env.Scheme, w.owner, ps, w.secret(t))
	return got, ps, err
}

// change writes a new value into the source Secret, as a rotation does.
func (w *pushWorld) change(t testing.TB, value string) {
	t.Helper()
	s := w.secret(t)
	s.Data["password"] = []byte(value)
	if err := env.Client.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// TestConfirmPush walks a PushSecret through ESO's answers: a version is confirmed only
// by a successful push of the current generation made after it was stamped; a new
// version of the Secret is stamped and waits for its own push.
func TestConfirmPush(t *testing.T) {
	ctx := context.Background()
	w := newPushWorld(t)
	key := client.ObjectKey{Namespace: w.ns, Name: w.source.Name}
	expect := func(what string, wantConfirmed bool, wantPending string) *esov1alpha1.PushSecret {
		t.Helper()
		got, ps, err := w.confirm(t, env.Client)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got.Confirmed != wantConfirmed || !strings.Contains(got.Pending, wantPending) || (wantConfirmed && got.Pending != "") {
			t.Fatalf("%s: %+v; want Confirmed=%v, Pending containing %q", what, got, wantConfirmed, wantPending)
		}
		return ps
	}

	ps := expect("a new PushSecret", false, "has just been asked to push the Secret's current version")
	if !metav1.IsControlledBy(ps, w.owner) || ps.Annotations[secrets.PushOfVersionAnnotation] != w.secret(t).ResourceVersion ||
		ps.Annotations[secrets.PushSyncedBeforeAnnotation] != "" {
		t.Fatalf("stamp: controlled %v, annotations %v; want the Secret's version %s and no earlier push",
			metav1.IsControlledBy(ps, w.owner), ps.Annotations, w.secret(t).ResourceVersion)
	}
	stamped := ps.ResourceVersion
	ps = expect("ESO has not answered", false, "has not pushed yet")
	if ps.ResourceVersion != stamped {
		t.Errorf("a pass of an unchanged version wrote: resourceVersion %s -> %s", stamped, ps.ResourceVersion)
	}
	if _, err := simulate.MarkPushSecretFailed(ctx, env.Client, key, "set secret failed: permission denied"); err != nil {
		t.Fatal(err)
	}
	expect("the push failed", false, "is Ready=False (reason Errored)")
	if _, err := simulate.MarkPushSecretSynced(ctx, env.Client, key); err != nil {
		t.Fatal(err)
	}
	ps = expect("pushed", true, "")
	pushed := ps.Status.SyncedResourceVersion
	ps = expect("pushed, again", true, "")
	if ps.Status.SyncedResourceVersion != pushed {
		t.Errorf("a converged pass changed the status: %q -> %q", pushed, ps.Status.SyncedResourceVersion)
	}

	// The Secret changes: its new version is stamped and waits for a push of its own;
	// the status of the earlier push does not count.
	w.change(t, "Password0After0The0First0Rotation")
	ps = expect("the Secret changed", false, "has just been asked")
	if ps.Annotations[secrets.PushOfVersionAnnotation] != w.secret(t).ResourceVersion || ps.Annotations[secrets.PushSyncedBeforeAnnotation] != pushed {
		t.Fatalf("annotations %v; want version %s, synced before %q", ps.Annotations, w.secret(t).ResourceVersion, pushed)
	}
	expect("the status is that of the earlier push", false, "has not pushed since the Secret changed")
	if _, err := simulate.MarkPushSecretSynced(ctx, env.Client, key); err != nil {
		t.Fatal(err)
	}
	expect("the new version pushed", true, "")

	// A spec change (a new generation) waits for a push of that generation.
	moved := func() *esov1alpha1.PushSecret {
		ps := desiredPushSecret(w.ns, w.source.Name, secrets.EffectiveStoreRef(nil))
		ps.Spec.Data[0].Match.RemoteRef.RemoteKey = "identity/db-moved"
		return ps
	}
	got, err := secrets.ConfirmPush(ctx, env.Client, env.Scheme, w.owner, moved(), w.secret(t))
	if err != nil || got.Confirmed || !strings.Contains(got.Pending, "has not pushed its current generation 2") {
		t.Fatalf("after a spec change: %+v, %v; want pending on generation 2", got, err)
	}
	if _, err := simulate.MarkPushSecretSynced(ctx, env.Client, key); err != nil {
		t.Fatal(err)
	}
	got, err = secrets.ConfirmPush(ctx, env.Client, env.Scheme, w.owner, moved(), w.secret(t))
	if err != nil || !got.Confirmed {
		t.Fatalf("the new generation pushed: %+v, %v", got, err)
	}
}

// The caller's own annotations stay beside the stamp, and the caller's PushSecret is
// not changed but for the stamp and the server's copy.
func TestConfirmPushKeepsCallerAnnotations(t *testing.T) {
	w := newPushWorld(t)
	ps := desiredPushSecret(w.ns, w.source.Name, secrets.EffectiveStoreRef(nil))
	ps.Annotations = map[string]string{"team": "identity"}
	theirs := ps.Annotations
	if _, err := secrets.ConfirmPush(context.Background(), env.Client, env.Scheme, w.owner, ps, w.secret(t)); err != nil {
		t.Fatal(err)
	}
	stored := &esov1alpha1.PushSecret{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(ps), stored); err != nil {
		t.Fatal(err)
	}
	if stored.Annotations["team"] != "identity" || stored.Annotations[secrets.PushOfVersionAnnotation] == "" {
		t.Errorf("annotations %v; want the caller's and the stamp", stored.Annotations)
	}
	if len(theirs) != 1 {
		t.Errorf("the caller's annotation map was written to: %v", theirs)
	}
}

// TestConfirmPushRefusesPushSecretsItDoesNotControl: a PushSecret of that name that
// the owner does not control, or that is being deleted, is neither stamped nor judged.
func TestConfirmPushRefusesPushSecretsItDoesNotControl(t *testing.T) {
	cases := map[string]struct {
		st       existingState
		wantErr  error
		wantText string
	}{
		"unowned":                    {wantErr: apply.ErrNotControlled, wantText: "has no controller"},
		"controlled by someone else": {st: existingState{controller: true}, wantErr: apply.ErrNotControlled, wantText: "is controlled by ConfigMap helm-release"},
		"someone else's, adopt ignored": {st: existingState{controller: true, adopt: true}, wantErr: apply.ErrNotControlled,
			wantText: "is controlled by ConfigMap helm-release"},
		"being deleted": {st: existingState{deleting: true}, wantErr: apply.ErrBeingDeleted},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			w := newPushWorld(t)
			existing := desiredPushSecret(w.ns, w.source.Name, secrets.EffectiveStoreRef(nil))
			existing.Spec.Selector.Secret.Name = "theirs"
			prepareExisting(t, w.ns, existing, tc.st)
			if err := env.Client.Create(ctx, existing); err != nil {
				t.Fatal(err)
			}
			if tc.st.deleting {
				env.DeleteHeld(t, existing)
			}
			// ESO has pushed their PushSecret: its status must not confirm anything of ours.
			createSecret(t, w.ns, "theirs", map[string][]byte{"password": []byte("theirs")})
			if _, err := simulate.MarkPushSecretSynced(ctx, env.Client, client.ObjectKeyFromObject(existing)); err != nil {
				t.Fatal(err)
			}
			before := &esov1alpha1.PushSecret{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(existing), before); err != nil {
				t.Fatal(err)
			}

			got, _, err := w.confirm(t, env.Client)
			if !errors.Is(err, tc.wantErr) || got.Confirmed {
				t.Fatalf("= %+v, %v; want %v and not confirmed", got, err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), "PushSecret "+w.ns+"/"+w.source.Name) || !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("error %q does not name the PushSecret and %q", err, tc.wantText)
			}
			stored := &esov1alpha1.PushSecret{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(existing), stored); err != nil {
				t.Fatalf("the existing PushSecret is gone: %v", err)
			}
			if stored.ResourceVersion != before.ResourceVersion || stored.Annotations[secrets.PushOfVersionAnnotation] != "" {
				t.Errorf("a refused PushSecret was written: resourceVersion %s -> %s, annotations %v",
					before.ResourceVersion, stored.ResourceVersion, stored.Annotations)
			}
		})
	}
}

// Input ConfirmPush cannot stamp a PushSecret with is refused before any API call.
func TestConfirmPushInvalidInput(t *testing.T) {
	ctx := context.Background()
	inj := faults.NewInjector()
	c := inj.Client(fakeBase(t))
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "identity", UID: "u"}}
	source := func(mutate func(*corev1.Secret)) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "identity-db", ResourceVersion: "7"}}
		mutate(s)
		return s
	}
	want := func() *esov1alpha1.PushSecret {
		return desiredPushSecret("ns", "identity-db", secrets.EffectiveStoreRef(nil))
	}
	for name, tc := range map[string]struct {
		want    *esov1alpha1.PushSecret
		source  *corev1.Secret
		nilSch  bool
		wantErr error
	}{
		"nil PushSecret":       {source: source(func(*corev1.Secret) {}), wantErr: secrets.ErrNilPushSecret},
		"nil source":           {want: want(), wantErr: secrets.ErrInvalidPushSource},
		"no resourceVersion":   {want: want(), source: source(func(s *corev1.Secret) { s.ResourceVersion = "" }), wantErr: secrets.ErrInvalidPushSource},
		"another namespace":    {want: want(), source: source(func(s *corev1.Secret) { s.Namespace = "other" }), wantErr: secrets.ErrInvalidPushSource},
		"not the selected one": {want: want(), source: source(func(s *corev1.Secret) { s.Name = "other" }), wantErr: secrets.ErrInvalidPushSource},
		"nil scheme":           {want: want(), source: source(func(*corev1.Secret) {}), nilSch: true, wantErr: apply.ErrNilScheme},
	} {
		t.Run(name, func(t *testing.T) {
			scheme := env.Scheme
			if tc.nilSch {
				scheme = nil
			}
			got, err := secrets.ConfirmPush(ctx, c, scheme, owner, tc.want, tc.source)
			if !errors.Is(err, tc.wantErr) || got.Confirmed {
				t.Fatalf("= %+v, %v; want %v", got, err, tc.wantErr)
			}
			if tc.want != nil && !strings.Contains(err.Error(), "PushSecret ns/identity-db") {
				t.Errorf("error %q does not name the PushSecret", err)
			}
			for _, v := range faults.Verbs() {
				if n := inj.Calls(v); n != 0 {
					t.Errorf("%d %s calls before the input was checked", n, v)
				}
			}
		})
	}
}

// TestPushConfirmationOf judges a PushSecret's status against the stamp.
func TestPushConfirmationOf(t *testing.T) {
	const version, before = "42", "1-aaaa"
	ps := func(mutate func(*esov1alpha1.PushSecret)) *esov1alpha1.PushSecret {
		p := &esov1alpha1.PushSecret{
			ObjectMeta: metav1.ObjectMeta{Generation: 1,
				Annotations: map[string]string{secrets.PushOfVersionAnnotation: version, secrets.PushSyncedBeforeAnnotation: before}},
			Status: esov1alpha1.PushSecretStatus{SyncedResourceVersion: "1-bbbb", Conditions: []esov1alpha1.PushSecretStatusCondition{{
				Type: esov1alpha1.PushSecretReady, Status: corev1.ConditionTrue, Reason: esov1alpha1.ReasonSynced}}},
		}
		mutate(p)
		return p
	}
	for name, tc := range map[string]struct {
		ps          *esov1alpha1.PushSecret
		wantPending string // "": confirmed
	}{
		"pushed since the stamp": {ps: ps(func(*esov1alpha1.PushSecret) {})},
		"first push of a new PushSecret": {ps: ps(func(p *esov1alpha1.PushSecret) {
			p.Annotations[secrets.PushSyncedBeforeAnnotation] = ""
		})},
		"nil":             {wantPending: "does not exist"},
		"another version": {ps: ps(func(p *esov1alpha1.PushSecret) { p.Annotations[secrets.PushOfVersionAnnotation] = "41" }), wantPending: `version "41"`},
		"not stamped":     {ps: ps(func(p *esov1alpha1.PushSecret) { p.Annotations = nil }), wantPending: `version ""`},
		"no synced-before": {ps: ps(func(p *esov1alpha1.PushSecret) {
			delete(p.Annotations, secrets.PushSyncedBeforeAnnotation)
		}), wantPending: "has no " + secrets.PushSyncedBeforeAnnotation},
		"no status":            {ps: ps(func(p *esov1alpha1.PushSecret) { p.Status = esov1alpha1.PushSecretStatus{} }), wantPending: "has not pushed yet"},
		"other condition only": {ps: ps(func(p *esov1alpha1.PushSecret) { p.Status.Conditions[0].Type = "Other" }), wantPending: "has not pushed yet"},
		"failed": {ps: ps(func(p *esov1alpha1.PushSecret) {
			p.Status.Conditions[0].Status, p.Status.Conditions[0].Reason = corev1.ConditionFalse, esov1alpha1.ReasonErrored
		}), wantPending: "is Ready=False (reason Errored)"},
		"True with another reason": {ps: ps(func(p *esov1alpha1.PushSecret) { p.Status.Conditions[0].Reason = "Other" }),
			wantPending: "is Ready=True (reason Other)"},
		"older generation": {ps: ps(func(p *esov1alpha1.PushSecret) { p.Generation = 2 }),
			wantPending: `has not pushed its current generation 2 (status.syncedResourceVersion "1-bbbb")`},
		"malformed syncedResourceVersion": {ps: ps(func(p *esov1alpha1.PushSecret) { p.Status.SyncedResourceVersion = "x-bbbb" }),
			wantPending: "has not pushed its current generation 1"},
		"no syncedResourceVersion": {ps: ps(func(p *esov1alpha1.PushSecret) { p.Status.SyncedResourceVersion = "" }),
			wantPending: "has not pushed its current generation 1"},
		"unchanged since the stamp": {ps: ps(func(p *esov1alpha1.PushSecret) { p.Status.SyncedResourceVersion = before }),
			wantPending: "has not pushed since the Secret changed"},
	} {
		t.Run(name, func(t *testing.T) {
			got := secrets.PushConfirmationOf(tc.ps, version)
			if tc.wantPending == "" {
				if !got.Confirmed || got.Pending != "" {
					t.Errorf("= %+v; want confirmed", got)
				}
				return
			}
			if got.Confirmed || !strings.Contains(got.Pending, tc.wantPending) {
				t.Errorf("= %+v; want pending %q", got, tc.wantPending)
			}
		})
	}
}

// TestFaultMatrixConfirmPush fails every API call of ConfirmPush, one at a time, over
// two versions of the Secret: the fault is reported, nothing is confirmed that ESO has
// not pushed, and the passes converge to the fault-free outcome.
func TestFaultMatrixConfirmPush(t *testing.T) {
	faults.Matrix{MaxPasses: 12, Setup: func(t *testing.T) faults.Scenario {
		w := newPushWorld(t)
		key := client.ObjectKey{Namespace: w.ns, Name: w.source.Name}
		changed := false
		pushedVersions := map[string]bool{} // the Secret versions ESO has pushed
		var last secrets.PushConfirmation
		return faults.Scenario{
			Client: env.Client,
			Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
				got, ps, err := w.confirm(t, c)
				last = got
				if err != nil {
					return ctrl.Result{}, err
				}
				if got.Confirmed && !pushedVersions[ps.Annotations[secrets.PushOfVersionAnnotation]] {
					t.Fatalf("version %s confirmed before ESO pushed it", ps.Annotations[secrets.PushOfVersionAnnotation])
				}
				switch {
				case !got.Confirmed:
					// ESO pushes the PushSecret meanwhile.
					if _, err := simulate.MarkPushSecretSynced(ctx, env.Client, key); err != nil {
						t.Fatal(err)
					}
					pushedVersions[w.secret(t).ResourceVersion] = true
					return ctrl.Result{RequeueAfter: secrets.PollInterval}, nil
				case !changed:
					w.change(t, "Password0After0The0First0Rotation")
					changed = true
					return ctrl.Result{RequeueAfter: secrets.PollInterval}, nil
				}
				return ctrl.Result{}, nil
			},
			Check: func(t *testing.T) {
				if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(w.owner), &corev1.ConfigMap{}); err != nil {
					t.Errorf("owner: %v", err)
				}
				if err := env.Client.Get(context.Background(), w.source, &corev1.Secret{}); err != nil {
					t.Errorf("source Secret: %v", err)
				}
			},
			State: func(t *testing.T) any {
				ps := &esov1alpha1.PushSecret{}
				if err := env.Client.Get(context.Background(), key, ps); err != nil {
					t.Fatal(err)
				}
				return []any{last, changed, metav1.IsControlledBy(ps, w.owner),
					ps.Annotations[secrets.PushOfVersionAnnotation] == w.secret(t).ResourceVersion,
					ps.Annotations[secrets.PushSyncedBeforeAnnotation] != ""}
			},
		}
	}}.Run(t)
}
