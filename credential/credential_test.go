package credential_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/credential"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

func TestRandom(t *testing.T) {
	const n = 4096
	v, err := credential.Random(n)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != n {
		t.Fatalf("len = %d, want %d", len(v), n)
	}
	counts := map[byte]int{}
	for _, b := range v {
		if !strings.ContainsRune(credential.Alphabet, rune(b)) {
			t.Fatalf("character %q outside the alphabet", b)
		}
		counts[b]++
	}
	// 4096 draws over 62 symbols: every symbol is expected about 66 times; a symbol
	// never drawn (or drawn 3x too often) means a broken mapping, not bad luck.
	for _, r := range credential.Alphabet {
		if c := counts[byte(r)]; c == 0 || c > 200 {
			t.Errorf("symbol %q drawn %d times in %d", r, c, n)
		}
	}
	a, _ := credential.Random(credential.DefaultLength)
	b, _ := credential.Random(credential.DefaultLength)
	if string(a) == string(b) {
		t.Error("two random values are equal")
	}
	if empty, err := credential.Random(0); err != nil || len(empty) != 0 {
		t.Errorf("Random(0) = %q, %v; want empty", empty, err)
	}
}

// world is one scenario: a namespace, an owner, and what Ensure logged and recorded.
type world struct {
	ns     string
	owner  *corev1.ConfigMap
	events *eventLog
	logs   *logBuffer
	ctx    context.Context
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ns := env.Namespace(t)
	w := &world{ns: ns, owner: newOwner(t, ns), events: &eventLog{}, logs: &logBuffer{}}
	w.ctx = w.logs.context(context.Background())
	return w
}

func (w *world) key() client.ObjectKey { return client.ObjectKey{Namespace: w.ns, Name: "app-token"} }

// spec is the Secret of the scenario, recorded through w.events.
func (w *world) spec() credential.Secret {
	return credential.Secret{Key: w.key(), DataKey: "token", Labels: map[string]string{"app": "x"},
		For: "token of App " + w.ns + "/app", Recorder: w.events}
}

func (w *world) get(t *testing.T) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), w.key(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// noValue fails when value shows in what w logged or recorded, or in res.
func (w *world) noValue(t *testing.T, value string, res credential.Result) {
	t.Helper()
	if value == "" {
		t.Fatal("no value to look for")
	}
	if strings.Contains(w.logs.String(), value) {
		t.Errorf("the credential appears in the log")
	}
	for _, e := range w.events.all() {
		if strings.Contains(fmt.Sprint(e), value) {
			t.Errorf("the credential appears in Event %s", e.Reason)
		}
	}
	if strings.Contains(fmt.Sprintf("%+v", res), value) {
		t.Errorf("the credential appears in the Result")
	}
}

// TestEnsureGeneratesOnce: a missing Secret is created with a random credential,
// controlled by the owner, and reported (a log line and a Normal Event naming the
// Secret, never the value); later calls find it and write nothing.
func TestEnsureGeneratesOnce(t *testing.T) {
	w := newWorld(t)
	ctx, writes := apply.WithWrites(w.ctx)
	res, err := credential.Ensure(ctx, env.Client, env.Scheme, w.owner, w.spec())
	if err != nil || res.Outcome != credential.OutcomeGenerated {
		t.Fatalf("Ensure = %v, %v; want Generated", res.Outcome, err)
	}
	s := w.get(t)
	value := string(s.Data["token"])
	if len(value) != credential.DefaultLength || s.Type != corev1.SecretTypeOpaque || s.Labels["app"] != "x" {
		t.Errorf("Secret: length %d, type %s, labels %v", len(value), s.Type, s.Labels)
	}
	if ref := metav1.GetControllerOf(s); ref == nil || ref.UID != w.owner.UID {
		t.Errorf("controller = %v, want the owner", ref)
	}
	if got := writes.All(); len(got) != 1 || got[0].Action != apply.ActionCreated || got[0].Key != w.key() {
		t.Errorf("recorded writes = %+v, want the create", got)
	}
	want := []event{{Regarding: "ConfigMap app", Related: "Secret app-token", Type: corev1.EventTypeNormal,
		Reason: credential.ReasonGenerated,
		Note:   fmt.Sprintf(`created Secret %s (key "token", the token of App %s/app) with a new random credential`, w.key(), w.ns)}}
	if diff := cmp.Diff(want, w.events.all()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if log := w.logs.String(); !strings.Contains(log, "generated credential Secret") || !strings.Contains(log, w.key().String()) {
		t.Errorf("log = %q, want the generation with the Secret's namespace/name", log)
	}
	w.noValue(t, value, res)

	for range 2 {
		res, err = credential.Ensure(w.ctx, env.Client, env.Scheme, w.owner, w.spec())
		if err != nil || res.Outcome != credential.OutcomeExisting || res.Secret == nil {
			t.Fatalf("again: Ensure = %+v, %v; want Existing", res.Outcome, err)
		}
	}
	if again := w.get(t); again.ResourceVersion != s.ResourceVersion || string(again.Data["token"]) != value {
		t.Errorf("the Secret was written again")
	}
	if n := len(w.events.all()); n != 1 {
		t.Errorf("%d events, want the one of the generation", n)
	}
}

// TestEnsureRegeneratedWhenInUse: a Secret lost while InUse reports the credential in
// use gets a new value, reported as a Warning that quotes InUse's answer.
func TestEnsureRegeneratedWhenInUse(t *testing.T) {
	w := newWorld(t)
	spec := w.spec()
	spec.InUse = func(context.Context) (string, error) { return "Deployment app still mounts it", nil }
	res, err := credential.Ensure(w.ctx, env.Client, env.Scheme, w.owner, spec)
	if err != nil || res.Outcome != credential.OutcomeRegenerated || res.InUse != "Deployment app still mounts it" {
		t.Fatalf("Ensure = %+v, %v; want Regenerated", res, err)
	}
	want := []event{{Regarding: "ConfigMap app", Related: "Secret app-token", Type: corev1.EventTypeWarning,
		Reason: credential.ReasonRegenerated,
		Note: fmt.Sprintf(`Secret %s (key "token", the token of App %s/app) was missing and no backup restored it: `+
			"created it with a new random credential; Deployment app still mounts it", w.key(), w.ns)}}
	if diff := cmp.Diff(want, w.events.all()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if log := w.logs.String(); !strings.Contains(log, "regenerated credential Secret") || !strings.Contains(log, w.key().String()) {
		t.Errorf("log = %q, want the regeneration with the Secret's namespace/name", log)
	}
	w.noValue(t, string(w.get(t).Data["token"]), res)
}

// TestEnsureRestores: a missing Secret whose backup holds the credential is created
// with that value (reported as a restore); while the backup may still deliver it,
// nothing is written or recorded.
func TestEnsureRestores(t *testing.T) {
	t.Run("from the backup", func(t *testing.T) {
		w := newWorld(t)
		spec := w.spec()
		spec.InUse = func(context.Context) (string, error) { t.Error("InUse asked for a restore"); return "", nil }
		spec.Restore = credential.RestorerFunc(func(_ context.Context, _ client.Client, key client.ObjectKey, dataKey string) (credential.Backup, error) {
			if key != w.key() || dataKey != "token" {
				t.Errorf("Restore(%s, %s)", key, dataKey)
			}
			return credential.Backup{Value: []byte("backed-up-token-0123"), From: "Secret " + w.ns + "/app-token-restore"}, nil
		})
		res, err := credential.Ensure(w.ctx, env.Client, env.Scheme, w.owner, spec)
		if err != nil || res.Outcome != credential.OutcomeRestored {
			t.Fatalf("Ensure = %+v, %v; want Restored", res, err)
		}
		if got := string(w.get(t).Data["token"]); got != "backed-up-token-0123" {
			t.Errorf("value = %q, want the backup's", got)
		}
		evs := w.events.all()
		if len(evs) != 1 || evs[0].Type != corev1.EventTypeNormal || evs[0].Reason != credential.ReasonRestored ||
			!strings.Contains(evs[0].Note, w.key().String()) || !strings.Contains(evs[0].Note, "app-token-restore") {
			t.Errorf("events = %+v, want one Restored naming the Secret and the backup", evs)
		}
		w.noValue(t, "backed-up-token-0123", res)
	})
	t.Run("pending", func(t *testing.T) {
		w := newWorld(t)
		spec := w.spec()
		spec.Restore = credential.RestorerFunc(func(context.Context, client.Client, client.ObjectKey, string) (credential.Backup, error) {
			return credential.Backup{Pending: "ExternalSecret x has not synced yet"}, nil
		})
		res, err := credential.Ensure(w.ctx, env.Client, env.Scheme, w.owner, spec)
		if err != nil || res.Outcome != credential.OutcomeRestorePending || res.Pending != "ExternalSecret x has not synced yet" {
			t.Fatalf("Ensure = %+v, %v; want RestorePending", res, err)
		}
		if err := env.Client.Get(context.Background(), w.key(), &corev1.Secret{}); !apierrors.IsNotFound(err) {
			t.Errorf("the Secret exists (err %v), want nothing written while the restore is pending", err)
		}
		if evs := w.events.all(); len(evs) != 0 {
			t.Errorf("events = %+v, want none", evs)
		}
	})
}

// TestEnsureNeverWritesExisting: a Secret that exists — made by hand, controlled by
// another object, or being deleted — is returned as read: not written, not adopted,
// nothing generated or reported, neither Restore nor InUse asked.
func TestEnsureNeverWritesExisting(t *testing.T) {
	other := func(w *world) []metav1.OwnerReference {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: w.ns}}
		if err := env.Client.Create(context.Background(), cm); err != nil {
			t.Fatal(err)
		}
		return []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: cm.UID, Controller: new(true)}}
	}
	tests := map[string]func(w *world, s *corev1.Secret){
		"unowned":         func(*world, *corev1.Secret) {},
		"someone else's":  func(w *world, s *corev1.Secret) { s.OwnerReferences = other(w) },
		"being deleted":   func(_ *world, s *corev1.Secret) { s.Finalizers = []string{"test.example/hold"} },
		"without the key": func(_ *world, s *corev1.Secret) { s.Data = map[string][]byte{"other": []byte("x")} },
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			w := newWorld(t)
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: w.key().Name, Namespace: w.ns},
				Data: map[string][]byte{"token": []byte("theirs-0123456789")}}
			mutate(w, s)
			if err := env.Client.Create(ctx, s); err != nil {
				t.Fatal(err)
			}
			if len(s.Finalizers) > 0 {
				if err := env.Client.Delete(ctx, s); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					cur := &corev1.Secret{}
					if env.Client.Get(context.Background(), w.key(), cur) == nil {
						cur.Finalizers = nil
						_ = env.Client.Update(context.Background(), cur)
					}
				})
			}
			before := w.get(t)
			spec := w.spec()
			spec.Restore = credential.RestorerFunc(func(context.Context, client.Client, client.ObjectKey, string) (credential.Backup, error) {
				t.Error("Restore asked for an existing Secret")
				return credential.Backup{}, nil
			})
			spec.InUse = func(context.Context) (string, error) { t.Error("InUse asked for an existing Secret"); return "", nil }
			res, err := credential.Ensure(w.ctx, env.Client, env.Scheme, w.owner, spec)
			if err != nil || res.Outcome != credential.OutcomeExisting || res.Secret == nil || res.Secret.UID != before.UID {
				t.Fatalf("Ensure = %+v, %v; want Existing with the Secret", res.Outcome, err)
			}
			after := w.get(t)
			if after.ResourceVersion != before.ResourceVersion || !cmp.Equal(after.OwnerReferences, before.OwnerReferences) {
				t.Errorf("the Secret was written: owners %v -> %v", before.OwnerReferences, after.OwnerReferences)
			}
			if evs := w.events.all(); len(evs) != 0 {
				t.Errorf("events = %+v, want none", evs)
			}
			if strings.Contains(w.logs.String(), "credential Secret") {
				t.Errorf("log = %q, want no generation reported", w.logs.String())
			}
		})
	}
}

// TestEnsureCreateRace: another writer creates the Secret between Ensure's read and
// its create. Ensure returns that Secret, read past the cache, and reports nothing.
func TestEnsureCreateRace(t *testing.T) {
	w := newWorld(t)
	racing := interceptor.NewClient(mustWithWatch(t), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			theirs := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: obj.GetName(), Namespace: obj.GetNamespace()},
				Data: map[string][]byte{"token": []byte("theirs-0123456789")}}
			if err := env.Client.Create(ctx, theirs); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	res, err := credential.Ensure(w.ctx, racing, env.Scheme, w.owner, w.spec())
	if err != nil || res.Outcome != credential.OutcomeExisting || string(res.Secret.Data["token"]) != "theirs-0123456789" {
		t.Fatalf("Ensure = %+v, %v; want Existing with the racing writer's Secret", res.Outcome, err)
	}
	if evs := w.events.all(); len(evs) != 0 {
		t.Errorf("events = %+v, want none: the credential that was generated was never stored", evs)
	}
}

// TestEnsureErrors: a failed read, Restore, InUse or create returns an error naming
// the Secret; nothing is created after it, and no generation is reported.
func TestEnsureErrors(t *testing.T) {
	boom := apierrors.NewInternalError(errors.New("etcd is down"))
	tests := map[string]struct {
		funcs   interceptor.Funcs
		mutate  func(*credential.Secret)
		text    string
		created bool
	}{
		"get Secret": {
			funcs: interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
				return boom
			}},
			text: "get Secret %s/app-token",
		},
		"restore": {
			mutate: func(s *credential.Secret) {
				s.Restore = credential.RestorerFunc(func(context.Context, client.Client, client.ObjectKey, string) (credential.Backup, error) {
					return credential.Backup{}, boom
				})
			},
			text: "restore Secret %s/app-token",
		},
		"in use": {
			mutate: func(s *credential.Secret) { s.InUse = func(context.Context) (string, error) { return "", boom } },
			text:   "check what uses the credential of missing Secret %s/app-token",
		},
		"create": {
			funcs: interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
				return boom
			}},
			text: "create Secret %s/app-token",
		},
		"create served, answer lost": {
			funcs: interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
				if err := c.Create(ctx, o, opts...); err != nil {
					return err
				}
				return context.DeadlineExceeded
			}},
			text: "create Secret %s/app-token", created: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			spec := w.spec()
			if tc.mutate != nil {
				tc.mutate(&spec)
			}
			c := interceptor.NewClient(mustWithWatch(t), tc.funcs)
			res, err := credential.Ensure(w.ctx, c, env.Scheme, w.owner, spec)
			if text := fmt.Sprintf(tc.text, w.ns); err == nil || !strings.Contains(err.Error(), text) {
				t.Fatalf("err = %v, want one containing %q", err, text)
			}
			if res != (credential.Result{}) {
				t.Errorf("Result = %+v, want the zero Result with an error", res)
			}
			err = env.Client.Get(context.Background(), w.key(), &corev1.Secret{})
			if exists := err == nil; exists != tc.created {
				t.Errorf("Secret exists = %t (err %v), want %t", exists, err, tc.created)
			}
			if evs := w.events.all(); len(evs) != 0 {
				t.Errorf("events = %+v, want none", evs)
			}
		})
	}
}

// TestEnsureInvalid: bad input is refused before any API call, naming the field.
func TestEnsureInvalid(t *testing.T) {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns", UID: "uid-1"}}
	valid := credential.Secret{Key: client.ObjectKey{Namespace: "ns", Name: "app-token"}, DataKey: "token"}
	tests := map[string]struct {
		scheme *runtime.Scheme
		owner  client.Object
		mutate func(*credential.Secret)
		want   error
		text   string
	}{
		"nil scheme":          {want: apply.ErrNilScheme},
		"owner not persisted": {owner: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"}}, want: apply.ErrOwnerNotPersisted},
		"no name":             {mutate: func(s *credential.Secret) { s.Key.Name = "" }, want: credential.ErrInvalidSecret, text: "Key.Name"},
		"no namespace":        {mutate: func(s *credential.Secret) { s.Key.Namespace = "" }, want: credential.ErrInvalidSecret, text: "Key.Namespace"},
		"no data key":         {mutate: func(s *credential.Secret) { s.DataKey = "" }, want: credential.ErrInvalidSecret, text: "DataKey"},
		"invalid data key":    {mutate: func(s *credential.Secret) { s.DataKey = "a b" }, want: credential.ErrInvalidSecret, text: `DataKey: invalid credential Secret: "a b" is not a valid Secret key`},
		"too short":           {mutate: func(s *credential.Secret) { s.Length = 8 }, want: credential.ErrInvalidSecret, text: "Length: invalid credential Secret: 8 is outside [16, 4096]"},
		"too long":            {mutate: func(s *credential.Secret) { s.Length = 5000 }, want: credential.ErrInvalidSecret, text: "Length"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			calls := 0
			c := interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
				Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					calls++
					return errors.New("unexpected call")
				},
				Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
					calls++
					return errors.New("unexpected call")
				},
			})
			scheme := env.Scheme
			if name == "nil scheme" {
				scheme = tc.scheme
			}
			o := tc.owner
			if o == nil {
				o = owner
			}
			s := valid
			if tc.mutate != nil {
				tc.mutate(&s)
			}
			_, err := credential.Ensure(context.Background(), c, scheme, o, s)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("err = %v, want %v containing %q", err, tc.want, tc.text)
			}
			if calls != 0 {
				t.Errorf("%d API calls, want none", calls)
			}
		})
	}
}

// TestEnsureFaultMatrix fails every call of a first generation once (a create with 409,
// 500, a timeout after it was served or a cancelled context; a read with 500 or a
// cancelled context): the credential, once stored, never changes; at most one
// generation is reported; every run ends with the Secret of the run that never
// failed.
func TestEnsureFaultMatrix(t *testing.T) {
	faults.Matrix{
		Verbs: []faults.Verb{faults.VerbGet, faults.VerbCreate},
		Setup: func(t *testing.T) faults.Scenario {
			w := newWorld(t)
			var value string
			return faults.Scenario{
				Client: env.Client,
				Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
					_, err := credential.Ensure(ctx, c, env.Scheme, w.owner, w.spec())
					return ctrl.Result{}, err
				},
				Check: func(t *testing.T) {
					s := &corev1.Secret{}
					switch err := env.Client.Get(context.Background(), w.key(), s); {
					case apierrors.IsNotFound(err):
						if value != "" {
							t.Errorf("the Secret was deleted")
						}
					case err != nil:
						t.Fatal(err)
					case value == "":
						value = string(s.Data["token"])
					case string(s.Data["token"]) != value:
						t.Errorf("the credential was generated twice")
					}
					if n := len(w.events.all()); n > 1 {
						t.Errorf("%d generations reported, want at most one", n)
					}
				},
				State: func(t *testing.T) any {
					s := w.get(t)
					return fmt.Sprintf("length=%d labels=%v controller=%s", len(s.Data["token"]), s.Labels,
						metav1.GetControllerOf(s).Name)
				},
			}
		},
	}.RunWritesAndReads(t)
}

func mustWithWatch(t *testing.T) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
