package reconcile_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// operatorName is the field manager the Applier tests name the operator with.
const operatorName = "my-operator"

// cacheCaughtUp waits until c (a manager's cached client) holds the widget at key as
// the API server stores it.
func cacheCaughtUp(t *testing.T, c client.Client, key types.NamespacedName) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) {
			cached := &Widget{}
			if err := c.Get(ctx, key, cached); err != nil {
				return false, err
			}
			return cached.ResourceVersion == getWidget(t, key).ResourceVersion, nil
		})
	if err != nil {
		t.Fatalf("the cache never caught up with the widget: %v", err)
	}
}

// TestConvergedPassThroughApplierSendsNothing: a pass of RunPass (the fetch, the
// finalizer, the pipeline, the status) through an Applier over a manager's cache writes
// the finalizer and the status once; once the cache holds them, a pass that changes no
// status sends no request at all.
func TestConvergedPassThroughApplierSendsNothing(t *testing.T) {
	ns := env.Namespace(t)
	key := createWidget(t, ns)
	a, counter := env.StartApplier(t, ns, operatorName)
	r := newWidgetReconciler(t, a)
	pass := func(ctx context.Context) error {
		res, err := r.Reconcile(ctx, key)
		if err == nil && !res.IsZero() {
			t.Errorf("pass result = %+v, want zero", res)
		}
		return err
	}

	ctx, writes := apply.WithWrites(context.Background())
	if err := pass(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Widget " + key.String() + " configured metadata.finalizers",
		"Widget " + key.String() + " configured status.conditions,status.endpoint",
	}
	if diff := cmp.Diff(want, testenv.WriteStrings(writes.All())); diff != "" {
		t.Errorf("first pass writes (-want +got):\n%s", diff)
	}
	cacheCaughtUp(t, a, key)
	testenv.ExpectQuiet(t, counter, 0, pass)
	assertConditions(t, getWidget(t, key), allReadyConditions(1)...)
}

// TestRunPassRecordsWrites: the finalizer patches and the status write of a pass are
// reported through apply.Record as configurations of the custom resource, with the
// paths they changed; a pass that changes nothing records nothing.
func TestRunPassRecordsWrites(t *testing.T) {
	ns := env.Namespace(t)
	key := createWidget(t, ns)
	r := newWidgetReconciler(t, env.Client)
	run := func() []string {
		t.Helper()
		ctx, writes := apply.WithWrites(context.Background())
		if _, err := r.Reconcile(ctx, key); err != nil {
			t.Fatal(err)
		}
		for _, w := range writes.All() {
			if w.GVK != widgetGV.WithKind("Widget") {
				t.Errorf("write %s has GVK %v", w, w.GVK)
			}
		}
		return testenv.WriteStrings(writes.All())
	}
	w := "Widget " + key.String()
	if diff := cmp.Diff([]string{w + " configured metadata.finalizers", w + " configured status.conditions,status.endpoint"}, run()); diff != "" {
		t.Errorf("first pass (-want +got):\n%s", diff)
	}
	if got := run(); len(got) != 0 {
		t.Errorf("converged pass recorded %v, want nothing", got)
	}
	if err := env.Client.Delete(context.Background(), getWidget(t, key)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{w + " configured metadata.finalizers"}, run()); diff != "" {
		t.Errorf("deletion pass (-want +got):\n%s", diff)
	}
}

// TestRunPassLogsWrites: with PassOptions.LogWrites a pass logs each write made with its
// context, and the writes still reach a collection the caller's context carries.
func TestRunPassLogsWrites(t *testing.T) {
	ns := env.Namespace(t)
	key := createWidget(t, ns)
	r := newWidgetReconciler(t, env.Client)
	r.opts.LogWrites = true
	var mu sync.Mutex
	var lines []string
	ctx := log.IntoContext(context.Background(), funcr.New(func(_, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{}))
	ctx, writes := apply.WithWrites(ctx)
	if _, err := r.Reconcile(ctx, key); err != nil {
		t.Fatal(err)
	}
	w := "Widget " + key.String()
	if diff := cmp.Diff([]string{w + " configured metadata.finalizers", w + " configured status.conditions,status.endpoint"},
		testenv.WriteStrings(writes.All())); diff != "" {
		t.Errorf("writes reaching the caller's collection (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{`"msg"="` + w + ` configured" "fields"=["metadata.finalizers"]`,
		`"msg"="` + w + ` configured" "fields"=["status.conditions" "status.endpoint"]`} {
		found := false
		for _, l := range lines {
			found = found || strings.Contains(l, want)
		}
		if !found {
			t.Errorf("no log line contains %s; lines:\n%s", want, strings.Join(lines, "\n"))
		}
	}
}

// TestRunPassThroughApplierWritesUnderTheOperatorsName: the finalizer patch and the
// status write of a pass through an Applier carry the operator's field manager.
func TestRunPassThroughApplierWritesUnderTheOperatorsName(t *testing.T) {
	ns := env.Namespace(t)
	key := createWidget(t, ns)
	a := apply.NewApplier(env.Client, apply.ApplierOptions{FieldManager: operatorName})
	if _, err := newWidgetReconciler(t, a).Reconcile(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, mf := range getWidget(t, key).ManagedFields {
		if mf.Manager == operatorName {
			got = append(got, string(mf.Operation)+"/"+mf.Subresource)
		}
	}
	if diff := cmp.Diff([]string{"Update/", "Update/status"}, got); diff != "" {
		t.Errorf("the operator's managedFields entries (-want +got):\n%s", diff)
	}
}
