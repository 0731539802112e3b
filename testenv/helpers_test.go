package testenv_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

func newDatabase(t *testing.T, ns string) *mariadbv1alpha1.Database {
	t.Helper()
	db := &mariadbv1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		Spec: mariadbv1alpha1.DatabaseSpec{MariaDBRef: mariadbv1alpha1.MariaDBRef{
			ObjectReference: mariadbv1alpha1.ObjectReference{Name: "mariadb"},
		}},
	}
	if err := env.Client.Create(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestWaitForConditionCurrent(t *testing.T) {
	ctx := context.Background()
	db := newDatabase(t, env.Namespace(t))
	go func() {
		time.Sleep(200 * time.Millisecond)
		_, _ = simulate.MarkDatabaseReady(ctx, env.Client, client.ObjectKeyFromObject(db))
	}()
	got := &mariadbv1alpha1.Database{ObjectMeta: metav1.ObjectMeta{Name: db.Name, Namespace: db.Namespace}}
	if err := testenv.WaitForCondition(ctx, env.Client, got, "Ready", metav1.ConditionTrue); err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Conditions) == 0 {
		t.Error("obj was not filled with the object read")
	}
}

func TestWaitForConditionRejectsStale(t *testing.T) {
	defer testenv.SetConditionTimeout(time.Second)()
	ctx := context.Background()
	db := newDatabase(t, env.Namespace(t))
	if _, err := simulate.MarkDatabaseNotReady(ctx, env.Client, client.ObjectKeyFromObject(db), "Failed", "no server"); err != nil {
		t.Fatal(err)
	}
	if _, err := simulate.MarkDatabaseReady(ctx, env.Client, client.ObjectKeyFromObject(db)); err != nil {
		t.Fatal(err)
	}
	// A spec change: generation 2, while Ready still observed generation 1.
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(db), db); err != nil {
		t.Fatal(err)
	}
	db.Spec.CharacterSet = "latin1"
	if err := env.Client.Update(ctx, db); err != nil {
		t.Fatal(err)
	}
	if db.Generation != 2 {
		t.Fatalf("generation %d, want 2", db.Generation)
	}
	rec := runTB(t, func(tb testing.TB) {
		testenv.ExpectCondition(tb, env.Client, db, "Ready", metav1.ConditionTrue)
	})
	if rec.finished || rec.fatal == "" {
		t.Fatal("a stale Ready=True was accepted")
	}
	for _, want := range []string{
		"Database " + db.Namespace + "/db",
		"no current condition Ready=True (observedGeneration 2)",
		"generation 2, conditions:",
		"Ready=True reason=Created observedGeneration=1 (stale): Created",
	} {
		if !strings.Contains(rec.fatal, want) {
			t.Errorf("failure %q does not contain %q", rec.fatal, want)
		}
	}
}

func TestWaitForConditionTimeoutNamesConditions(t *testing.T) {
	defer testenv.SetConditionTimeout(time.Second)()
	ctx := context.Background()
	db := newDatabase(t, env.Namespace(t))
	if _, err := simulate.MarkDatabaseNotReady(ctx, env.Client, client.ObjectKeyFromObject(db), "Failed", "no server"); err != nil {
		t.Fatal(err)
	}
	rec := runTB(t, func(tb testing.TB) {
		testenv.ExpectCondition(tb, env.Client, db, "Ready", metav1.ConditionTrue)
	})
	for _, want := range []string{"generation 1, conditions:", "Ready=False reason=Failed observedGeneration=1: no server"} {
		if !strings.Contains(rec.fatal, want) {
			t.Errorf("failure %q does not contain %q", rec.fatal, want)
		}
	}

	// A missing object: the last read's error is quoted.
	gone := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: db.Namespace}}
	err := testenv.WaitForCondition(ctx, env.Client, gone, "Ready", metav1.ConditionTrue)
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing object: %v, want a not-found error", err)
	}
}

// WaitForConditionWhile runs its hook before every read, keeps waiting through hook
// errors and names the last one when the wait ends.
func TestWaitForConditionWhile(t *testing.T) {
	defer testenv.SetConditionTimeout(2 * time.Second)()
	ready := func(db *mariadbv1alpha1.Database, calls *int) func(context.Context) error {
		return func(ctx context.Context) error {
			*calls++
			if *calls < 3 { // the dependency is not there yet: the wait goes on
				return errors.New("MariaDB not created yet")
			}
			_, err := simulate.MarkDatabaseReady(ctx, env.Client, client.ObjectKeyFromObject(db))
			return err
		}
	}
	failing := func(_ *mariadbv1alpha1.Database, calls *int) func(context.Context) error {
		return func(context.Context) error { *calls++; return errors.New("store not ready") }
	}
	for name, tc := range map[string]struct {
		reason    string
		hook      func(db *mariadbv1alpha1.Database, calls *int) func(context.Context) error
		wantErr   []string // nil: the wait succeeds
		wantCalls int      // at least
	}{
		"the hook makes the condition true": {
			reason: "the wait runs the hook until it plays the dependency", hook: ready, wantCalls: 3,
		},
		"the hook keeps failing": {
			reason:    "a hook error does not end the wait; the last one is reported",
			hook:      failing,
			wantErr:   []string{"no current condition Ready=True", "last hook error: store not ready"},
			wantCalls: 2,
		},
		"no hook": {
			reason:  "a nil hook is WaitForCondition",
			wantErr: []string{"no current condition Ready=True"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			db := newDatabase(t, env.Namespace(t))
			calls := 0
			var hook func(context.Context) error
			if tc.hook != nil {
				hook = tc.hook(db, &calls)
			}
			err := testenv.WaitForConditionWhile(context.Background(), env.Client, db, "Ready", metav1.ConditionTrue, hook)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("%s: %v", tc.reason, err)
			case tc.wantErr != nil && err == nil:
				t.Fatalf("%s: the wait succeeded", tc.reason)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s: error %q does not contain %q", tc.reason, err, want)
				}
			}
			if calls < tc.wantCalls {
				t.Errorf("%s: the hook ran %d times, want at least %d", tc.reason, calls, tc.wantCalls)
			}
		})
	}
}

// ExpectConditionWhile fails the test with WaitForConditionWhile's error.
func TestExpectConditionWhile(t *testing.T) {
	defer testenv.SetConditionTimeout(time.Second)()
	db := newDatabase(t, env.Namespace(t))
	rec := runTB(t, func(tb testing.TB) {
		testenv.ExpectConditionWhile(tb, env.Client, db, "Ready", metav1.ConditionTrue,
			func(context.Context) error { return errors.New("store not ready") })
	})
	if rec.finished || !strings.Contains(rec.fatal, "last hook error: store not ready") {
		t.Errorf("finished %v, failure %q; want a t.Fatal naming the hook error", rec.finished, rec.fatal)
	}
	ok := runTB(t, func(tb testing.TB) {
		testenv.ExpectConditionWhile(tb, env.Client, db, "Ready", metav1.ConditionTrue, func(ctx context.Context) error {
			_, err := simulate.MarkDatabaseReady(ctx, env.Client, client.ObjectKeyFromObject(db))
			return err
		})
	})
	if !ok.finished || ok.fatal != "" {
		t.Errorf("finished %v, failure %q; want the wait to pass", ok.finished, ok.fatal)
	}
}

func TestExpectUnchanged(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := env.Client.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	child := func(name string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		if err := controllerutil.SetControllerReference(owner, cm, env.Scheme); err != nil {
			t.Fatal(err)
		}
		return cm
	}
	kept, dropped := child("kept"), child("dropped")
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: ns}}
	for _, o := range []client.Object{kept, dropped, other} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	lists := []client.ObjectList{&corev1.ConfigMapList{}, &corev1.SecretList{}}

	// A pass that writes nothing the owner controls (only an unrelated object) passes.
	rec := runTB(t, func(tb testing.TB) {
		testenv.ExpectUnchanged(tb, env.Client, owner, func(ctx context.Context) error {
			other.Data = map[string]string{"a": "b"}
			return env.Client.Update(ctx, other)
		}, lists...)
	})
	if len(rec.errors) > 0 || rec.fatal != "" {
		t.Errorf("quiet pass: %v %s", rec.errors, rec.fatal)
	}

	// A pass that updates, deletes and creates is reported object by object.
	rec = runTB(t, func(tb testing.TB) {
		testenv.ExpectUnchanged(tb, env.Client, owner, func(ctx context.Context) error {
			kept.Data = map[string]string{"a": "b"}
			return errors.Join(env.Client.Update(ctx, kept), env.Client.Delete(ctx, dropped),
				env.Client.Create(ctx, child("new")))
		}, lists...)
	})
	if len(rec.errors) != 1 {
		t.Fatalf("errors %v (fatal %q), want one", rec.errors, rec.fatal)
	}
	for _, want := range []string{
		"wrote 3 objects controlled by ConfigMap " + ns + "/owner",
		"ConfigMap " + ns + "/dropped: disappeared",
		"ConfigMap " + ns + "/kept: resourceVersion ",
		"ConfigMap " + ns + "/new: appeared",
	} {
		if !strings.Contains(rec.errors[0], want) {
			t.Errorf("failure %q does not contain %q", rec.errors[0], want)
		}
	}
	if strings.Contains(rec.errors[0], "other") {
		t.Errorf("failure %q names an object the owner does not control", rec.errors[0])
	}

	// An error from the pass fails the test.
	rec = runTB(t, func(tb testing.TB) {
		testenv.ExpectUnchanged(tb, env.Client, owner, func(context.Context) error { return errors.New("boom") }, lists...)
	})
	if !strings.Contains(rec.fatal, "boom") {
		t.Errorf("fatal %q, want the pass's error", rec.fatal)
	}
}

func TestNewSchemeWith(t *testing.T) {
	s, err := testenv.NewSchemeWith(func(s *runtime.Scheme) error {
		s.AddKnownTypeWithName(corev1.SchemeGroupVersion.WithKind("Extra"), &corev1.ConfigMap{})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"Extra", "ConfigMap"} {
		if !s.Recognizes(corev1.SchemeGroupVersion.WithKind(kind)) {
			t.Errorf("scheme does not know %s", kind)
		}
	}
	if !s.Recognizes(mariadbv1alpha1.GroupVersion.WithKind("Database")) {
		t.Error("scheme lost NewScheme's upstream types")
	}
	if _, err := testenv.NewSchemeWith(func(*runtime.Scheme) error { return errors.New("bad") }); err == nil || !strings.Contains(err.Error(), "bad") {
		t.Errorf("error %v, want the AddToScheme's error", err)
	}
}
