package testenv_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/operator"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// saRecorder is a trivial operator: it records the ServiceAccounts it reconciles.
type saRecorder struct {
	mu   sync.Mutex
	seen map[client.ObjectKey]int
}

func (r *saRecorder) Reconcile(_ context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[req.NamespacedName]++
	return ctrl.Result{}, nil
}

func (r *saRecorder) count(key client.ObjectKey) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[key]
}

// setup registers r on the operator's management cluster.
func (r *saRecorder) setup(_ context.Context, mgr mcmanager.Manager, _ *multicluster.ClusterResolver) error {
	return ctrl.NewControllerManagedBy(mgr.GetLocalManager()).Named("serviceaccounts").
		For(&corev1.ServiceAccount{}).Complete(r)
}

// waitFor polls cond every 50 ms for up to 30 s and fails the test with what when it
// never holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("%s: not within 30s", what)
	}
}

// StartOperator returns once the setup has run and the cache has synced: the
// operator's controller reconciles a ServiceAccount of its namespace, its cache sees
// nothing of another namespace, its requests are counted, and the setup got the
// manager's own resolver.
func TestStartOperator(t *testing.T) {
	ns, other := env.Namespace(t), env.Namespace(t)
	rec := &saRecorder{seen: map[client.ObjectKey]int{}}
	var got *multicluster.ClusterResolver
	op := env.StartOperator(t, testenv.OperatorOptions{OperatorOptions: multicluster.OperatorOptions{Namespace: ns}},
		func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
			got = resolver
			return rec.setup(ctx, mgr, resolver)
		})
	if got == nil || got != op.Resolver {
		t.Fatalf("Operator.Resolver = %p, the setup got %p", op.Resolver, got)
	}
	if op.Local.Manager != op.Manager.GetLocalManager() || op.Local.Applier == nil || op.Local.Applier.FieldManager() != apply.FieldManager ||
		op.Local.Scheme != env.Scheme || op.Local.APIReader == nil || op.Local.Namespace != ns {
		t.Errorf("Operator.Local = %+v, want the management cluster's parts", op.Local)
	}
	if op.Counter.Total() == 0 {
		t.Error("the counter saw no request of a manager whose cache has synced")
	}
	ctx := context.Background()
	for _, key := range []client.ObjectKey{{Namespace: ns, Name: "mine"}, {Namespace: other, Name: "theirs"}} {
		if err := env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "ServiceAccount "+ns+"/mine reconciled", func() bool { return rec.count(client.ObjectKey{Namespace: ns, Name: "mine"}) > 0 })
	if n := rec.count(client.ObjectKey{Namespace: other, Name: "theirs"}); n != 0 {
		t.Errorf("ServiceAccount %s/theirs, outside the operator's namespace, reconciled %d times", other, n)
	}
	var list corev1.ServiceAccountList
	if err := op.Manager.GetLocalManager().GetCache().List(ctx, &list, client.InNamespace(other)); err == nil {
		t.Errorf("the operator's cache listed namespace %s", other)
	}
}

// The operator stops when the test ends: a ServiceAccount created afterwards is not
// reconciled.
func TestStartOperatorStopsWhenTheTestEnds(t *testing.T) {
	ns := env.Namespace(t)
	rec := &saRecorder{seen: map[client.ObjectKey]int{}}
	t.Run("inner", func(t *testing.T) {
		env.StartOperator(t, testenv.OperatorOptions{OperatorOptions: multicluster.OperatorOptions{Namespace: ns}}, rec.setup)
		if err := env.Client.Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "before"}}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "ServiceAccount before reconciled", func() bool { return rec.count(client.ObjectKey{Namespace: ns, Name: "before"}) > 0 })
	})
	if err := env.Client.Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "after"}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if n := rec.count(client.ObjectKey{Namespace: ns, Name: "after"}); n != 0 {
		t.Errorf("ServiceAccount after, created once the test ended, reconciled %d times", n)
	}
}

// RunOperator's stop ends the operator and returns what multicluster.RunOperator
// returned (nil for a clean stop), as often as it is called.
func TestRunOperatorStop(t *testing.T) {
	rec := &saRecorder{seen: map[client.ObjectKey]int{}}
	op, stop, err := env.RunOperator(testenv.OperatorOptions{OperatorOptions: multicluster.OperatorOptions{Namespace: env.Namespace(t)}}, rec.setup)
	if err != nil {
		t.Fatal(err)
	}
	if op.Manager == nil || op.Resolver == nil || op.Counter == nil {
		t.Fatalf("RunOperator returned %+v", op)
	}
	for i := range 2 {
		if err := stop(); err != nil {
			t.Fatalf("stop #%d = %v, want nil", i+1, err)
		}
	}
}

// A setup that fails, options RunOperator refuses and a Config that may not read what
// the resolver needs are errors of RunOperator (fatal in StartOperator), naming the
// cause; nothing is left running.
func TestStartOperatorFails(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name  string
		opts  func(t *testing.T) testenv.OperatorOptions
		setup multicluster.OperatorSetup
		is    error
		want  string
	}{
		{name: "setup error", opts: func(*testing.T) testenv.OperatorOptions { return testenv.OperatorOptions{} },
			setup: func(context.Context, mcmanager.Manager, *multicluster.ClusterResolver) error { return boom },
			is:    boom, want: "operator setup: boom"},
		{name: "bad namespace", opts: func(*testing.T) testenv.OperatorOptions {
			return testenv.OperatorOptions{OperatorOptions: multicluster.OperatorOptions{Namespace: "No"}}
		}, is: multicluster.ErrInvalidOptions, want: `--namespace "No"`},
		{name: "a user without rights", opts: func(t *testing.T) testenv.OperatorOptions {
			return testenv.OperatorOptions{Config: env.ConfigAs(t, "nobody")}
		}, want: "get Namespace kube-system"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setup := tc.setup
			if setup == nil {
				setup = func(context.Context, mcmanager.Manager, *multicluster.ClusterResolver) error { return nil }
			}
			_, _, err := env.RunOperator(tc.opts(t), setup)
			if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("RunOperator = %v, want an error saying %q", err, tc.want)
			}
			rec := runTB(t, func(tb testing.TB) { env.StartOperator(tb, tc.opts(t), setup) })
			if rec.finished || !strings.Contains(rec.fatal, tc.want) {
				t.Fatalf("StartOperator finished=%v fatal=%q, want a fatal failure saying %q", rec.finished, rec.fatal, tc.want)
			}
		})
	}
	if _, _, err := env.RunOperator(testenv.OperatorOptions{}, nil); err == nil {
		t.Error("RunOperator with a nil setup returned no error")
	}
}

// The runner exposes the controllers the setup registered, whichever builder it used:
// each runs a pass of a management-cluster request with no reference the test kept.
func TestStartOperatorExposesTheReconcilers(t *testing.T) {
	ns := env.Namespace(t)
	plain := &saRecorder{seen: map[client.ObjectKey]int{}}
	multi := &saRecorder{seen: map[client.ObjectKey]int{}}
	op := env.StartOperator(t, testenv.OperatorOptions{OperatorOptions: multicluster.OperatorOptions{Namespace: ns}},
		func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
			if err := plain.setup(ctx, mgr, resolver); err != nil {
				return err
			}
			return mcbuilder.ControllerManagedBy(mgr).Named("serviceaccounts-mc").
				For(&corev1.ServiceAccount{}, mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false)).
				Complete(multicluster.LocalReconciler(multi))
		})
	if len(op.Reconcilers) != 2 {
		t.Fatalf("Operator.Reconcilers: %d, want the 2 controllers the setup registered", len(op.Reconcilers))
	}
	key := client.ObjectKey{Namespace: ns, Name: "direct"}
	for i, rec := range []*saRecorder{plain, multi} {
		if _, err := op.Reconcilers[i].Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
			t.Fatalf("Reconcilers[%d]: %v", i, err)
		}
		if n := rec.count(key); n != 1 {
			t.Errorf("Reconcilers[%d] ran the pass of %s %d times, want 1", i, key, n)
		}
	}
}

// A single-cluster operator runs through operator.Run with the kit's defaults: the
// setup gets the operator's parts, its controller on a plain ctrl.Builder reconciles a
// ServiceAccount of its namespace only, the runner exposes that controller and what the
// setup got, and counts the manager's requests.
func TestStartSingleClusterOperator(t *testing.T) {
	ns, other := env.Namespace(t), env.Namespace(t)
	rec := &saRecorder{seen: map[client.ObjectKey]int{}}
	var got operator.Operator
	var opts testenv.OperatorOptions
	opts.FieldManager, opts.Namespace = "sa-operator", ns
	op := env.StartSingleClusterOperator(t, opts, func(_ context.Context, parts operator.Operator) error {
		got = parts
		return ctrl.NewControllerManagedBy(parts.Manager).Named("serviceaccounts").For(&corev1.ServiceAccount{}).Complete(rec)
	})
	if op.Manager != nil || op.Resolver != nil {
		t.Errorf("a single-cluster operator has a multicluster manager %v or resolver %v", op.Manager, op.Resolver)
	}
	if op.Local.Applier != got.Applier || op.Local.Applier.FieldManager() != "sa-operator" || op.Local.Namespace != ns ||
		op.Local.Scheme != env.Scheme || op.Local.Manager == nil {
		t.Errorf("Operator.Local = %+v, want what the setup got (%+v)", op.Local, got)
	}
	if op.Counter.Total() == 0 {
		t.Error("the counter saw no request of a manager whose cache has synced")
	}
	ctx := context.Background()
	for _, key := range []client.ObjectKey{{Namespace: ns, Name: "mine"}, {Namespace: other, Name: "theirs"}} {
		if err := env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "ServiceAccount "+ns+"/mine reconciled", func() bool { return rec.count(client.ObjectKey{Namespace: ns, Name: "mine"}) > 0 })
	if n := rec.count(client.ObjectKey{Namespace: other, Name: "theirs"}); n != 0 {
		t.Errorf("ServiceAccount %s/theirs, outside the operator's namespace, reconciled %d times", other, n)
	}
	if len(op.Reconcilers) != 1 {
		t.Fatalf("Operator.Reconcilers: %d, want the one controller the setup registered", len(op.Reconcilers))
	}
	key := client.ObjectKey{Namespace: ns, Name: "direct"}
	if _, err := op.Reconcilers[0].Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil || rec.count(key) != 1 {
		t.Errorf("Reconcilers[0] of %s: %v, %d passes; want one pass", key, err, rec.count(key))
	}
}

// What the single-cluster runner refuses is an error naming the cause (fatal in
// StartSingleClusterOperator); stop returns what operator.Run returned.
func TestRunSingleClusterOperator(t *testing.T) {
	boom := errors.New("boom")
	noop := func(context.Context, operator.Operator) error { return nil }
	cases := map[string]struct {
		reason string
		opts   testenv.OperatorOptions
		setup  operator.Setup
		is     error
		want   string
	}{
		"NilSetup": {reason: "A nil setup is refused.", want: "the setup function is nil"},
		"TargetClusters": {reason: "A single-cluster operator has no target clusters.", setup: noop,
			opts: testenv.OperatorOptions{OperatorOptions: multicluster.OperatorOptions{ClustersNamespace: "clusters"}},
			want: `ClustersNamespace "clusters"`},
		"SetupError": {reason: "The setup's error is returned.", setup: func(context.Context, operator.Operator) error { return boom },
			is: boom, want: "operator setup: boom"},
		"BadOptions": {reason: "Options operator.Run refuses are its error.", setup: noop,
			opts: testenv.OperatorOptions{OperatorOptions: multicluster.OperatorOptions{Namespace: "No"}},
			is:   operator.ErrInvalidOptions, want: `--namespace "No"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := env.RunSingleClusterOperator(tc.opts, tc.setup)
			if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("\n%s\nRunSingleClusterOperator = %v, want an error saying %q", tc.reason, err, tc.want)
			}
			rec := runTB(t, func(tb testing.TB) { env.StartSingleClusterOperator(tb, tc.opts, tc.setup) })
			if rec.finished || !strings.Contains(rec.fatal, tc.want) {
				t.Fatalf("\n%s\nStartSingleClusterOperator finished=%v fatal=%q, want a fatal failure saying %q", tc.reason, rec.finished, rec.fatal, tc.want)
			}
		})
	}
	var opts testenv.OperatorOptions
	opts.Namespace = env.Namespace(t)
	_, stop, err := env.RunSingleClusterOperator(opts, noop)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := stop(); err != nil {
			t.Fatalf("stop #%d = %v, want nil", i+1, err)
		}
	}
}
