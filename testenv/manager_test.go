package testenv_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// recordingTB is a testing.TB whose failures are recorded instead of failing the test;
// Fatal and Fatalf end the goroutine, as they do on a real test. Run it with runTB.
type recordingTB struct {
	testing.TB
	mu       sync.Mutex
	errors   []string
	fatal    string
	finished bool
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recordingTB) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.fatal = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recordingTB) Fatal(args ...any) {
	r.mu.Lock()
	r.fatal = fmt.Sprint(args...)
	r.mu.Unlock()
	runtime.Goexit()
}

// runTB runs fn with a recordingTB over t in its own goroutine and returns the
// recording once fn has returned or failed fatally.
func runTB(t *testing.T, fn func(testing.TB)) *recordingTB {
	r := &recordingTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
		r.mu.Lock()
		r.finished = true
		r.mu.Unlock()
	}()
	<-done
	return r
}

// managerWorld is an owner in a fresh namespace, a manager whose cache sees that
// namespace and an Applier over its cached client.
type managerWorld struct {
	ns      string
	owner   *corev1.ConfigMap
	mgr     ctrl.Manager
	counter *testenv.RequestCounter
	applier *apply.Applier
}

func newManagerWorld(t *testing.T) *managerWorld {
	t.Helper()
	ns := env.Namespace(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := env.Client.Create(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	mgr, counter := env.StartManager(t, ctrl.Options{
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	return &managerWorld{ns: ns, owner: owner, mgr: mgr, counter: counter,
		applier: apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{FieldManager: "testenv-test"})}
}

// ensureChild applies the ConfigMap child with data through the Applier.
func (w *managerWorld) ensureChild(ctx context.Context, data string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: w.ns},
		Data: map[string]string{"key": data}}
	return apply.EnsureObject(ctx, w.applier, env.Scheme, w.owner, cm, apply.FieldManager)
}

// TestStartManagerAndExpectQuiet: a pass applying a ConfigMap through an Applier over
// a started manager's cache sends requests the counter sees, then converges to sending
// none (or exactly the GET it sends past the cache).
func TestStartManagerAndExpectQuiet(t *testing.T) {
	w := newManagerWorld(t)
	pass := func(ctx context.Context) error { return w.ensureChild(ctx, "v1") }

	ctx, writes := apply.WithWrites(context.Background())
	w.counter.Reset()
	if err := pass(ctx); err != nil {
		t.Fatal(err)
	}
	if got := writes.Changed(); len(got) != 1 || got[0].Action != apply.ActionCreated {
		t.Fatalf("first pass recorded %v, want one Created", got)
	}
	if w.counter.Writes() == 0 {
		t.Error("the counter saw no write of the first pass")
	}
	testenv.ExpectQuiet(t, w.counter, 0, pass)

	child := &corev1.ConfigMap{}
	withLiveRead := func(ctx context.Context) error {
		if err := w.mgr.GetAPIReader().Get(ctx, client.ObjectKey{Namespace: w.ns, Name: "child"}, child); err != nil {
			return err
		}
		return pass(ctx)
	}
	testenv.ExpectQuiet(t, w.counter, 1, withLiveRead)
	if diff := cmp.Diff([]string{apply.CreateFieldManager("testenv-test") + "/Update"}, testenv.FieldManagers(child)); diff != "" {
		t.Errorf("field managers (-want +got):\n%s", diff)
	}
}

// TestExpectQuietReportsAPassThatKeepsWriting: a pass that changes the ConfigMap every
// time never becomes quiet, and ExpectQuiet fails fatally once its timeout is spent.
func TestExpectQuietReportsAPassThatKeepsWriting(t *testing.T) {
	defer testenv.SetQuietTimeout(time.Second)()
	w := newManagerWorld(t)
	n := 0
	rec := runTB(t, func(tb testing.TB) {
		testenv.ExpectQuiet(tb, w.counter, 0, func(ctx context.Context) error {
			n++
			return w.ensureChild(ctx, fmt.Sprint(n))
		})
	})
	if rec.finished || !strings.Contains(rec.fatal, "never converged") {
		t.Errorf("ExpectQuiet finished=%v with fatal %q, want a fatal failure saying the passes never converged", rec.finished, rec.fatal)
	}
	if n < 2 {
		t.Errorf("ExpectQuiet ran %d passes, want it to keep polling", n)
	}
}

// TestExpectQuietReportsEachNoisyPassAfterConvergence: a pass that is quiet once and
// then reads past the cache every time is reported once for each of the three passes
// after the quiet one, and the GET count ExpectQuiet was told to expect must match.
func TestExpectQuietReportsEachNoisyPassAfterConvergence(t *testing.T) {
	w := newManagerWorld(t)
	read := func(ctx context.Context) error {
		return w.mgr.GetAPIReader().Get(ctx, client.ObjectKeyFromObject(w.owner), &corev1.ConfigMap{})
	}
	if err := read(context.Background()); err != nil { // the discovery requests of the first read
		t.Fatal(err)
	}
	n := 0
	rec := runTB(t, func(tb testing.TB) {
		testenv.ExpectQuiet(tb, w.counter, 0, func(ctx context.Context) error {
			n++
			if n == 1 {
				return nil
			}
			return read(ctx)
		})
	})
	if !rec.finished || rec.fatal != "" {
		t.Fatalf("ExpectQuiet finished=%v with fatal %q, want it to finish", rec.finished, rec.fatal)
	}
	if len(rec.errors) != 3 {
		t.Errorf("ExpectQuiet reported %q, want three noisy passes", rec.errors)
	}
	for _, e := range rec.errors {
		if !strings.Contains(e, "sent 1 requests") {
			t.Errorf("ExpectQuiet reported %q, want a pass that sent 1 request", e)
		}
	}

	// The same noisy pass is quiet when its one GET is expected.
	testenv.ExpectQuiet(t, w.counter, 1, read)
}

func TestFieldManagers(t *testing.T) {
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		{Manager: "kubectl-create", Operation: metav1.ManagedFieldsOperationUpdate},
		{Manager: "my-operator", Operation: metav1.ManagedFieldsOperationApply},
		{Manager: "simulator", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"},
	}}}
	if diff := cmp.Diff([]string{"kubectl-create/Update", "my-operator/Apply"}, testenv.FieldManagers(obj)); diff != "" {
		t.Errorf("FieldManagers(obj) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"kubectl-create/Update", "my-operator/Apply", "simulator/Update/status"},
		testenv.FieldManagers(obj, "status")); diff != "" {
		t.Errorf(`FieldManagers(obj, "status") (-want +got):\n%s`, diff)
	}
}

// Go cancels the context it hands to start when the test ends and waits for start to
// return before the test's other cleanups run.
func TestGo(t *testing.T) {
	returned := make(chan struct{})
	t.Run("inner", func(t *testing.T) {
		ctx := testenv.Go(t, func(ctx context.Context) error {
			<-ctx.Done()
			close(returned)
			return nil
		})
		if ctx.Err() != nil {
			t.Fatal("the context is cancelled before the test ends")
		}
	})
	select {
	case <-returned:
	default:
		t.Fatal("start had not returned when the test's cleanup finished")
	}
}
