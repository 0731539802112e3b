package database_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/credential"
	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// event is one Event an eventLog recorded.
type event struct {
	Regarding, Related string // "Kind name"
	Type, Reason, Note string
}

// eventLog is an events.EventRecorder that keeps what it is given.
type eventLog struct {
	mu     sync.Mutex
	events []event
}

func (l *eventLog) Eventf(regarding, related runtime.Object, eventtype, reason, _ /* action */, note string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, event{Regarding: kindName(regarding), Related: kindName(related),
		Type: eventtype, Reason: reason, Note: fmt.Sprintf(note, args...)})
}

func (l *eventLog) all() []event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]event(nil), l.events...)
}

// kindName names an object as "Kind name" (the kind from the scheme).
func kindName(o runtime.Object) string {
	if o == nil {
		return ""
	}
	name := ""
	if m, ok := o.(metav1.Object); ok {
		name = m.GetName()
	}
	return typeName(o) + " " + name
}

// logBuffer captures log lines at every verbosity.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *logBuffer) context(ctx context.Context) context.Context {
	return logr.NewContext(ctx, funcr.New(func(prefix, args string) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.lines = append(b.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 10}))
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// reportWorld is a provisioning scenario whose passes record Events and log lines.
type reportWorld struct {
	ns     string
	owner  client.Object
	events *eventLog
	logs   *logBuffer
	ctx    context.Context
	// seen collects every condition message and error of the passes.
	seen []string
}

func newReportWorld(t *testing.T) *reportWorld {
	t.Helper()
	ns := env.Namespace(t)
	w := &reportWorld{ns: ns, owner: newOwner(t, ns), events: &eventLog{}, logs: &logBuffer{}}
	w.ctx = w.logs.context(context.Background())
	need(t)(simulate.MarkMariaDBReady(w.ctx, env.Client, newMariaDB(t, ns)))
	return w
}

// pass runs one pass with the Events recorded and, when mutate is set, the
// parameters changed by it.
func (w *reportWorld) pass(t *testing.T, mutate func(*database.ProvisionParams)) metav1.Condition {
	t.Helper()
	p := params(w.ns, true)
	p.Recorder = w.events
	if mutate != nil {
		mutate(&p)
	}
	cond, _, err := database.ReconcileProvision(w.ctx, env.Client, env.Scheme, w.owner, p)
	w.seen = append(w.seen, cond.Message)
	if err != nil {
		t.Fatalf("pass: %v", err)
	}
	return cond
}

// converge runs passes, marking what each waits for Ready, until the flow reports
// the database provisioned.
func (w *reportWorld) converge(t *testing.T, mutate func(*database.ProvisionParams)) {
	t.Helper()
	k := objectKey(w.ns, "identity")
	for range 6 {
		switch cond := w.pass(t, mutate); cond.Reason {
		case database.ReasonDatabaseProvisioned:
			return
		case database.ReasonDatabaseNotReady:
			need(t)(simulate.MarkDatabaseReady(w.ctx, env.Client, k))
		case database.ReasonUserNotReady:
			need(t)(simulate.MarkUserReady(w.ctx, env.Client, k))
			need(t)(simulate.MarkGrantReady(w.ctx, env.Client, k))
		case database.ReasonGrantNotReady:
			need(t)(simulate.MarkGrantReady(w.ctx, env.Client, k))
		default:
			t.Fatalf("pass stopped at %s: %s", cond.Reason, cond.Message)
		}
	}
	t.Fatal("no convergence within 6 passes")
}

// deleteSecret deletes the password Secret as another client would, and waits until
// it is gone.
func (w *reportWorld) deleteSecret(t *testing.T) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: passwordSecret, Namespace: w.ns}}
	if err := env.Client.Delete(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the password Secret to be gone", func(ctx context.Context) (bool, string, error) {
		err := env.Client.Get(ctx, objectKey(w.ns, passwordSecret), &corev1.Secret{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), client.IgnoreNotFound(err)
	})
}

// noPassword fails when password shows in a condition, a log line or an Event.
func (w *reportWorld) noPassword(t *testing.T, password string) {
	t.Helper()
	if password == "" {
		t.Fatal("no password to look for")
	}
	for _, s := range append(w.seen, w.logs.String()) {
		if strings.Contains(s, password) {
			t.Fatalf("the password appears in %q", s)
		}
	}
	for _, e := range w.events.all() {
		if strings.Contains(fmt.Sprint(e), password) {
			t.Fatalf("the password appears in Event %s", e.Reason)
		}
	}
}

// TestReconcileProvisionReportsPasswordGeneration: the first password is reported as
// generated (a Normal Event on the owner, a log line); a password Secret deleted while
// the User exists is created again with a new password and reported as a regeneration
// (a Warning Event naming the Secret and the User, a log line with the Secret's
// namespace/name). Neither carries a password; later passes report nothing.
func TestReconcileProvisionReportsPasswordGeneration(t *testing.T) {
	w := newReportWorld(t)
	w.converge(t, nil)
	first := string(getSecret(t, w.ns).Data["password"])
	secret, user := w.ns+"/"+passwordSecret, w.ns+"/identity"
	want := []event{{Regarding: "ConfigMap identity", Related: "Secret " + passwordSecret, Type: corev1.EventTypeNormal,
		Reason: credential.ReasonGenerated,
		Note:   fmt.Sprintf(`created Secret %s (key "password", the password of User %s) with a new random credential`, secret, user)}}
	if diff := cmp.Diff(want, w.events.all()); diff != "" {
		t.Fatalf("events of the first install (-want +got):\n%s", diff)
	}
	if log := w.logs.String(); !strings.Contains(log, "generated credential Secret") || !strings.Contains(log, secret) {
		t.Errorf("log = %q, want the generation with the Secret's namespace/name", log)
	}

	w.deleteSecret(t)
	if cond := w.pass(t, nil); cond.Reason != database.ReasonDatabaseProvisioned {
		t.Fatalf("pass after the deletion = %s: %s, want provisioned", cond.Reason, cond.Message)
	}
	second := string(getSecret(t, w.ns).Data["password"])
	if second == "" || second == first {
		t.Fatalf("the password Secret came back without a new password")
	}
	want = append(want, event{Regarding: "ConfigMap identity", Related: "Secret " + passwordSecret, Type: corev1.EventTypeWarning,
		Reason: credential.ReasonRegenerated,
		Note: fmt.Sprintf(`Secret %s (key "password", the password of User %s) was missing and no backup restored it: `+
			"created it with a new random credential; User %s exists: mariadb-operator sets the account's password "+
			"to the new one, and every client of the database needs it", secret, user, user)})
	if diff := cmp.Diff(want, w.events.all()); diff != "" {
		t.Errorf("events after the deletion (-want +got):\n%s", diff)
	}
	if log := w.logs.String(); !strings.Contains(log, "regenerated credential Secret") {
		t.Errorf("log = %q, want the regeneration", log)
	}
	for range 2 {
		w.pass(t, nil)
	}
	if n := len(w.events.all()); n != 2 {
		t.Errorf("%d events after two more passes, want the 2 of the two creations", n)
	}
	w.noPassword(t, first)
	w.noPassword(t, second)
}

// TestReconcileProvisionPasswordSecretNotOurs: with GeneratePassword, an existing
// password Secret the owner does not control — made by hand, controlled by another
// object — or one being deleted is never written or adopted, and nothing is generated
// or reported: one that holds a password is used, one without it or in deletion is
// waited for and the User is not applied.
func TestReconcileProvisionPasswordSecretNotOurs(t *testing.T) {
	tests := map[string]struct {
		mutate func(w *reportWorld, s *corev1.Secret)
		want   metav1.Condition
	}{
		"unowned": {
			want: metav1.Condition{Reason: database.ReasonUserNotReady},
		},
		"someone else's": {
			mutate: func(w *reportWorld, s *corev1.Secret) {
				other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: w.ns}}
				if err := env.Client.Create(context.Background(), other); err != nil {
					t.Fatal(err)
				}
				s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "other",
					UID: other.UID, Controller: new(true)}}
			},
			want: metav1.Condition{Reason: database.ReasonUserNotReady},
		},
		"someone else's without the key": {
			mutate: func(w *reportWorld, s *corev1.Secret) { s.Data = map[string][]byte{"other": []byte("x")} },
			want: metav1.Condition{Reason: database.ReasonPasswordSecretNotReady,
				Message: `password Secret %[1]s/identity-db-password of User %[1]s/identity has no value under key "password"`},
		},
		"being deleted": {
			mutate: func(_ *reportWorld, s *corev1.Secret) { s.Finalizers = []string{"test.example/hold"} },
			want: metav1.Condition{Reason: database.ReasonPasswordSecretNotReady,
				Message: "password Secret %[1]s/identity-db-password of User %[1]s/identity is being deleted"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			w := newReportWorld(t)
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: passwordSecret, Namespace: w.ns},
				Data: map[string][]byte{"password": []byte("theirs-0123456789")}}
			if tc.mutate != nil {
				tc.mutate(w, s)
			}
			if err := env.Client.Create(ctx, s); err != nil {
				t.Fatal(err)
			}
			if len(s.Finalizers) > 0 {
				if err := env.Client.Delete(ctx, s); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					cur := &corev1.Secret{}
					if env.Client.Get(context.Background(), objectKey(w.ns, passwordSecret), cur) == nil {
						cur.Finalizers = nil
						_ = env.Client.Update(context.Background(), cur)
					}
				})
			}
			before := getSecret(t, w.ns)
			var cond metav1.Condition
			for range 2 {
				if _, err := database.EnsureDatabase(ctx, env.Client, env.Scheme, w.owner, desiredDatabase(w.ns)); err != nil {
					t.Fatal(err)
				}
				need(t)(simulate.MarkDatabaseReady(ctx, env.Client, objectKey(w.ns, "identity")))
				cond = w.pass(t, nil)
			}
			if cond.Reason != tc.want.Reason || (tc.want.Message != "" && cond.Message != fmt.Sprintf(tc.want.Message, w.ns)) {
				t.Errorf("condition = %s: %s, want %s: %s", cond.Reason, cond.Message, tc.want.Reason, fmt.Sprintf(tc.want.Message, w.ns))
			}
			after := getSecret(t, w.ns)
			if after.ResourceVersion != before.ResourceVersion || !cmp.Equal(after.OwnerReferences, before.OwnerReferences) {
				t.Errorf("the Secret was written: owners %v -> %v", before.OwnerReferences, after.OwnerReferences)
			}
			if evs := w.events.all(); len(evs) != 0 {
				t.Errorf("events = %+v, want none", evs)
			}
			if strings.Contains(w.logs.String(), "credential Secret") {
				t.Errorf("log = %q, want no generation", w.logs.String())
			}
			userApplied := env.Client.Get(ctx, objectKey(w.ns, "identity"), newUser()) == nil
			if wantUser := tc.want.Reason == database.ReasonUserNotReady; userApplied != wantUser {
				t.Errorf("User applied = %t, want %t", userApplied, wantUser)
			}
		})
	}
}

// TestReconcileProvisionRestoresPassword: with a Restore whose backup holds the
// password, a deleted password Secret comes back with the same password (reported as
// a restore); while the backup may still deliver it, nothing is generated or applied,
// and the condition says what the restore waits for.
func TestReconcileProvisionRestoresPassword(t *testing.T) {
	var backup []byte
	var pending string
	restore := func(p *database.ProvisionParams) {
		p.Restore = credential.RestorerFunc(func(context.Context, client.Client, client.ObjectKey, string) (credential.Backup, error) {
			return credential.Backup{Value: backup, From: "the test's backup", Pending: pending}, nil
		})
	}
	w := newReportWorld(t)
	w.converge(t, restore) // no backup yet: a first install
	password := string(getSecret(t, w.ns).Data["password"])
	backup = []byte(password)

	w.deleteSecret(t)
	if cond := w.pass(t, restore); cond.Reason != database.ReasonDatabaseProvisioned {
		t.Fatalf("pass after the deletion = %s: %s, want provisioned", cond.Reason, cond.Message)
	}
	if got := string(getSecret(t, w.ns).Data["password"]); got != password {
		t.Errorf("the password changed across the restore")
	}
	evs := w.events.all()
	if len(evs) != 2 || evs[1].Type != corev1.EventTypeNormal || evs[1].Reason != credential.ReasonRestored ||
		!strings.Contains(evs[1].Note, w.ns+"/"+passwordSecret) {
		t.Errorf("events = %+v, want the generation, then a Restored naming the Secret", evs)
	}

	backup, pending = nil, "ExternalSecret identity-db-password-restore has not synced yet"
	w.deleteSecret(t)
	cond := w.pass(t, restore)
	want := fmt.Sprintf("waiting for the backup of password Secret %[1]s/identity-db-password of User %[1]s/identity: "+
		"ExternalSecret identity-db-password-restore has not synced yet; no new password is generated while the backup may still hold one", w.ns)
	if cond.Reason != database.ReasonPasswordRestorePending || cond.Message != want {
		t.Errorf("condition = %s: %s, want %s: %s", cond.Reason, cond.Message, database.ReasonPasswordRestorePending, want)
	}
	if err := env.Client.Get(context.Background(), objectKey(w.ns, passwordSecret), &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("the password Secret exists (err %v), want nothing generated while the restore is pending", err)
	}
	if n := len(w.events.all()); n != 2 {
		t.Errorf("%d events, want no new one while the restore is pending", n)
	}
	w.noPassword(t, password)
}

// TestReconcileProvisionRegenerationFaultMatrix deletes the password Secret of a
// provisioned database and fails every Get and Create of the passes that follow once
// (the read of the Secret and of the User that tells a regeneration, the create of the
// new Secret; a create with 409, 500, a timeout after it was served or a cancelled
// context; a read with 500 or a cancelled context): the new password, once stored,
// never changes, at most one regeneration is reported, nothing else is deleted or
// re-created, and every run converges to the world of the run that never failed.
func TestReconcileProvisionRegenerationFaultMatrix(t *testing.T) {
	faults.Matrix{
		Verbs: []faults.Verb{faults.VerbGet, faults.VerbCreate},
		Setup: func(t *testing.T) faults.Scenario {
			w := newProvisionWorld(t)
			w.recorder = &eventLog{}
			if !converge(t, w, env.Client, 5) {
				t.Fatal("setup: no convergence")
			}
			if err := env.Client.Delete(context.Background(), &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: passwordSecret, Namespace: w.ns}}); err != nil {
				t.Fatal(err)
			}
			w.password, w.recorder.events = "", nil
			delete(w.uids, "Secret")
			return faults.Scenario{
				Client: env.Client,
				Pass:   w.pass,
				Check: func(t *testing.T) {
					w.check(t)
					for _, e := range w.recorder.all() {
						if e.Reason != credential.ReasonRegenerated {
							t.Errorf("event %s, want only %s", e.Reason, credential.ReasonRegenerated)
						}
					}
					if n := len(w.recorder.all()); n > 1 {
						t.Errorf("%d regenerations reported, want at most one", n)
					}
				},
				State: w.state,
			}
		},
	}.RunWritesAndReads(t)
}

// newUser returns an empty User to read into.
func newUser() client.Object { return &mariadbv1alpha1.User{} }
