package multicluster_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// fakeResolver answers every named ref with target or err, and a nil ref with local.
type fakeResolver struct {
	local, target *multicluster.Target
	err           error
}

func (f fakeResolver) Resolve(_ context.Context, ref *commonv1.TargetClusterRefSpec) (*multicluster.Target, error) {
	if ref == nil || ref.Name == "" {
		return f.local, nil
	}
	return f.target, f.err
}

func TestGateTarget(t *testing.T) {
	local := &multicluster.Target{}
	edge := &multicluster.Target{Name: "edge"}
	unavailable := &multicluster.UnavailableError{Cluster: "edge", Reason: "does not answer", Err: errors.New("connection refused")}
	type want struct {
		target  *multicluster.Target
		result  ctrl.Result
		err     string
		reason  string
		message string
	}
	cases := map[string]struct {
		reason   string
		resolver multicluster.Resolver
		ref      *commonv1.TargetClusterRefSpec
		want     want
	}{
		"Local": {
			reason:   "A nil ref is the management cluster; the condition is left to the step.",
			resolver: fakeResolver{local: local},
			want:     want{target: local},
		},
		"Remote": {
			reason:   "A resolved ref returns its target and no requeue.",
			resolver: fakeResolver{target: edge},
			ref:      &commonv1.TargetClusterRefSpec{Name: "edge"},
			want:     want{target: edge},
		},
		"Unavailable": {
			reason:   "An unavailable cluster sets TargetClusterUnavailable with the resolver's error and requeues.",
			resolver: fakeResolver{err: unavailable},
			ref:      &commonv1.TargetClusterRefSpec{Name: "edge"},
			want: want{result: ctrl.Result{RequeueAfter: multicluster.RetryInterval},
				reason: multicluster.TargetClusterUnavailable, message: `target cluster "edge" does not answer: connection refused`},
		},
		"OtherError": {
			reason:   "Any other resolver error is returned and leaves the conditions alone.",
			resolver: fakeResolver{err: context.Canceled},
			ref:      &commonv1.TargetClusterRefSpec{Name: "edge"},
			want:     want{err: "resolve target cluster: context canceled"},
		},
		"NoTargetNoError": {
			reason:   "A resolver that answers nothing is an error, not a nil-pointer panic later.",
			resolver: fakeResolver{},
			ref:      &commonv1.TargetClusterRefSpec{Name: "edge"},
			want:     want{err: "returned no target and no error"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var conds []metav1.Condition
			got, res, err := multicluster.GateTarget(context.Background(), tc.resolver, tc.ref, &conds, 7, "SecretsReady")
			if got != tc.want.target {
				t.Errorf("%s\ntarget = %v, want %v", tc.reason, got, tc.want.target)
			}
			if diff := cmp.Diff(tc.want.result, res); diff != "" {
				t.Errorf("%s\nresult (-want +got):\n%s", tc.reason, diff)
			}
			if (err == nil) != (tc.want.err == "") || (err != nil && !strings.Contains(err.Error(), tc.want.err)) {
				t.Errorf("%s\nerr = %v, want %q", tc.reason, err, tc.want.err)
			}
			if !res.IsZero() && err != nil {
				t.Errorf("%s\na result together with an error", tc.reason)
			}
			c := meta.FindStatusCondition(conds, "SecretsReady")
			if tc.want.reason == "" {
				if c != nil {
					t.Errorf("%s\nunexpected condition %+v", tc.reason, c)
				}
				return
			}
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != tc.want.reason ||
				c.Message != tc.want.message || c.ObservedGeneration != 7 {
				t.Errorf("%s\ncondition = %+v", tc.reason, c)
			}
		})
	}
}

func TestGateTargetRefusesBadInput(t *testing.T) {
	var conds []metav1.Condition
	for name, call := range map[string]func() error{
		"nil resolver": func() error {
			_, _, err := multicluster.GateTarget(context.Background(), nil, nil, &conds, 1, "Ready")
			return err
		},
		"nil conditions": func() error {
			_, _, err := multicluster.GateTarget(context.Background(), fakeResolver{}, nil, nil, 1, "Ready")
			return err
		},
		"empty condition type": func() error {
			_, _, err := multicluster.GateTarget(context.Background(), fakeResolver{}, nil, &conds, 1, "")
			return err
		},
	} {
		if err := call(); !errors.Is(err, multicluster.ErrInvalidOptions) {
			t.Errorf("%s: err = %v, want ErrInvalidOptions", name, err)
		}
	}
}

func TestUnavailableError(t *testing.T) {
	cause := errors.New("dial tcp: connection refused")
	err := fmt.Errorf("wrapped: %w", &multicluster.UnavailableError{Cluster: "edge", Reason: "does not answer", Err: cause})
	if !errors.Is(err, multicluster.ErrTargetClusterUnavailable) || !errors.Is(err, cause) {
		t.Fatalf("errors.Is fails for %v", err)
	}
	if got, want := err.Error(), `wrapped: target cluster "edge" does not answer: dial tcp: connection refused`; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}

func TestFinalizerFor(t *testing.T) {
	long := strings.Repeat("edge-cluster-", 10)
	for _, name := range []string{"edge", "edge-1.example.com", long, long + "x"} {
		f := multicluster.FinalizerFor(name)
		if errs := validation.IsQualifiedName(f); len(errs) != 0 {
			t.Errorf("FinalizerFor(%q) = %q is not a valid finalizer: %v", name, f, errs)
		}
		if !strings.HasPrefix(f, multicluster.FinalizerDomain+"/") {
			t.Errorf("FinalizerFor(%q) = %q lacks the domain", name, f)
		}
	}
	if got := multicluster.FinalizerFor("edge"); got != multicluster.FinalizerDomain+"/edge" {
		t.Errorf("a short name is kept as is: got %q", got)
	}
	if multicluster.FinalizerFor(long) == multicluster.FinalizerFor(long+"x") {
		t.Error("two long names share a finalizer")
	}
}

func TestNewCleanupRefusesBadOptions(t *testing.T) {
	for name, tc := range map[string]struct {
		resolver multicluster.Resolver
		opts     multicluster.CleanupOptions
		want     string
	}{
		"nil resolver": {opts: multicluster.CleanupOptions{Children: []client.ObjectList{&corev1.ConfigMapList{}}}, want: "resolver is nil"},
		"no children":  {resolver: fakeResolver{}, want: "Children is empty"},
		"nil child":    {resolver: fakeResolver{}, opts: multicluster.CleanupOptions{Children: []client.ObjectList{nil}}, want: "Children[0] is nil"},
	} {
		_, err := multicluster.NewCleanup(tc.resolver, tc.opts)
		if !errors.Is(err, multicluster.ErrInvalidOptions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrInvalidOptions naming %q", name, err, tc.want)
		}
	}
}

func TestFinalizeLeavesALiveCRAlone(t *testing.T) {
	cl, err := multicluster.NewCleanup(fakeResolver{}, multicluster.CleanupOptions{Children: []client.ObjectList{&corev1.ConfigMapList{}}})
	if err != nil {
		t.Fatal(err)
	}
	g := &Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "ns", Finalizers: []string{multicluster.FinalizerFor("edge")}}}
	res, err := cl.Finalize(context.Background(), nil, g, nil)
	if err != nil || !res.IsZero() || len(g.Finalizers) != 1 {
		t.Fatalf("Finalize on a live CR = %v, %v, finalizers %v; want nothing done", res, err, g.Finalizers)
	}
}

// deletingGadget creates a Gadget on env holding edge's finalizer and a finalizer of
// the test's own (released at cleanup), and deletes it.
func deletingGadget(t *testing.T, ns string) *Gadget {
	t.Helper()
	const hold = "test.c5c3.io/hold"
	g := &Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: ns,
		Finalizers: []string{multicluster.FinalizerFor("edge"), hold}},
		Spec: GadgetSpec{TargetClusterRef: &commonv1.TargetClusterRefSpec{Name: "edge"}}}
	ctx := context.Background()
	if err := env.Client.Create(ctx, g); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, g); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(g), g); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.ReleaseFinalizers(t, g) })
	return g
}

func TestFinalizeFaults(t *testing.T) {
	remote := apply.RemoteOwnership{ManagementCluster: "mgmt-a"}
	for _, verb := range []faults.Verb{faults.VerbList, faults.VerbDelete, faults.VerbPatch} {
		t.Run(string(verb), func(t *testing.T) {
			ns := env.Namespace(t)
			namespaceOn(t, target, ns)
			g := deletingGadget(t, ns)
			onTarget := faults.NewInjector()
			onMgmt := faults.NewInjector()
			tc := onTarget.Client(target.Client)
			tgt := &multicluster.Target{Name: "edge", APIReader: tc, Ownership: &remote,
				Client: apply.NewApplier(tc, apply.ApplierOptions{Remote: &remote})}
			child := childOf(g)
			if err := apply.EnsureObject(context.Background(), tgt.Client, env.Scheme, g, child, apply.FieldManager); err != nil {
				t.Fatal(err)
			}
			cl, err := multicluster.NewCleanup(fakeResolver{target: tgt}, multicluster.CleanupOptions{
				Children: []client.ObjectList{&corev1.ConfigMapList{}}})
			if err != nil {
				t.Fatal(err)
			}
			mc := onMgmt.Client(env.Client)
			if verb == faults.VerbPatch {
				onMgmt.Arm(verb, 1, faults.Internal)
			} else {
				onTarget.Arm(verb, 1, faults.Internal)
			}
			res, err := cl.Finalize(context.Background(), mc, g, g.Spec.TargetClusterRef)
			if !errors.Is(err, faults.ErrInjected) || !res.IsZero() {
				t.Fatalf("Finalize with a failing %s = %v, %v; want the error and no result", verb, res, err)
			}
			if !strings.Contains(err.Error(), "edge") && verb != faults.VerbPatch {
				t.Errorf("error %q does not name the target cluster", err)
			}
			if !slices.Contains(g.Finalizers, multicluster.FinalizerFor("edge")) {
				t.Fatalf("finalizer dropped after a failed sweep: %v", g.Finalizers)
			}
			// The next pass, without the fault, finishes the sweep.
			onTarget.Disarm()
			onMgmt.Disarm()
			if res, err = cl.Finalize(context.Background(), mc, g, g.Spec.TargetClusterRef); err != nil || !res.IsZero() {
				t.Fatalf("Finalize after the fault = %v, %v", res, err)
			}
			if slices.Contains(g.Finalizers, multicluster.FinalizerFor("edge")) {
				t.Fatalf("finalizer kept after the sweep: %v", g.Finalizers)
			}
			if ok, _ := get(context.Background(), target, childOf(g)); ok {
				t.Fatal("child survived the sweep")
			}
		})
	}
}

func TestFinalizeWaitsThenGivesUp(t *testing.T) {
	ns := env.Namespace(t)
	g := deletingGadget(t, ns)
	unavailable := &multicluster.UnavailableError{Cluster: "edge", Reason: "does not answer"}
	cl, err := multicluster.NewCleanup(fakeResolver{err: unavailable}, multicluster.CleanupOptions{
		Children: []client.ObjectList{&corev1.ConfigMapList{}}, GiveUpAfter: time.Hour, ConditionType: childrenReady})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cl.Finalize(context.Background(), env.Client, g, g.Spec.TargetClusterRef)
	if err != nil || res.RequeueAfter != multicluster.RetryInterval {
		t.Fatalf("Finalize before the bound = %v, %v; want a requeue after %s", res, err, multicluster.RetryInterval)
	}
	c := meta.FindStatusCondition(g.Status.Conditions, childrenReady)
	if c == nil || c.Reason != multicluster.TargetClusterUnavailable || !strings.Contains(c.Message, `"edge" does not answer`) ||
		!strings.Contains(c.Message, "giving up at") {
		t.Fatalf("condition while waiting = %+v", c)
	}
	if !slices.Contains(g.Finalizers, multicluster.FinalizerFor("edge")) {
		t.Fatalf("finalizer dropped before the bound: %v", g.Finalizers)
	}

	cl, err = multicluster.NewCleanup(fakeResolver{err: unavailable}, multicluster.CleanupOptions{
		Children: []client.ObjectList{&corev1.ConfigMapList{}}, GiveUpAfter: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := cl.Finalize(context.Background(), env.Client, g, g.Spec.TargetClusterRef); err != nil || !res.IsZero() {
		t.Fatalf("Finalize after the bound = %v, %v", res, err)
	}
	if slices.Contains(g.Finalizers, multicluster.FinalizerFor("edge")) {
		t.Fatalf("finalizer kept after the bound: %v", g.Finalizers)
	}
}

func TestTrackAddsAFinalizerOnlyForATargetCluster(t *testing.T) {
	ns := env.Namespace(t)
	cl, err := multicluster.NewCleanup(fakeResolver{local: &multicluster.Target{}, target: &multicluster.Target{}}, multicluster.CleanupOptions{
		Children: []client.ObjectList{&corev1.ConfigMapList{}}})
	if err != nil {
		t.Fatal(err)
	}
	g := &Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: ns}}
	if err := env.Client.Create(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	if err := cl.Track(context.Background(), env.Client, g, &multicluster.Target{}); err != nil || len(g.Finalizers) != 0 {
		t.Fatalf("Track on the management cluster = %v, finalizers %v; want none", err, g.Finalizers)
	}
	if err := cl.Track(context.Background(), env.Client, g, &multicluster.Target{Name: "edge"}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(g), g); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{multicluster.FinalizerFor("edge")}, g.Finalizers); diff != "" {
		t.Fatalf("finalizers on the server (-want +got):\n%s", diff)
	}
	// Moving back to the management cluster sweeps the old cluster (the fake resolves
	// it to the management cluster, where nothing is to sweep) and drops its finalizer.
	if err := cl.Track(context.Background(), env.Client, g, &multicluster.Target{}); err != nil {
		t.Fatal(err)
	}
	if len(g.Finalizers) != 0 {
		t.Fatalf("finalizers after moving back = %v", g.Finalizers)
	}
}

func TestResolveWithoutClustersNamespace(t *testing.T) {
	mgr := localManager(t)
	r, err := multicluster.NewResolver(context.Background(), mgr, multicluster.ResolverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	local, err := r.Resolve(context.Background(), nil)
	if err != nil || !local.IsLocal() || local.Ownership != nil || local.Recheck() != (ctrl.Result{}) {
		t.Fatalf("Resolve(nil) = %+v, %v; want the management cluster", local, err)
	}
	if _, ok := local.Client.(*apply.Applier); !ok {
		t.Fatalf("the management cluster's client is %T, want an *apply.Applier", local.Client)
	}
	_, err = r.Resolve(context.Background(), &commonv1.TargetClusterRefSpec{Name: "edge"})
	if !errors.Is(err, multicluster.ErrTargetClusterUnavailable) || !strings.Contains(err.Error(), "no clusters namespace") {
		t.Fatalf("Resolve(edge) without target clusters = %v", err)
	}
	// The identity defaults to kube-system's UID.
	ns := &corev1.Namespace{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: "kube-system"}, ns); err != nil {
		t.Fatal(err)
	}
	if got := r.Remote().ManagementCluster; got != string(ns.UID) {
		t.Fatalf("identity = %q, want kube-system's UID %q", got, ns.UID)
	}
}

func TestNewResolverRefusesBadInput(t *testing.T) {
	if _, err := multicluster.NewResolver(context.Background(), nil, multicluster.ResolverOptions{}); !errors.Is(err, multicluster.ErrInvalidOptions) {
		t.Errorf("nil manager: %v", err)
	}
	mgr := localManager(t)
	_, err := multicluster.NewResolver(context.Background(), mgr, multicluster.ResolverOptions{ManagementCluster: "not a label value!"})
	if !errors.Is(err, multicluster.ErrInvalidOptions) || !strings.Contains(err.Error(), "ManagementCluster") {
		t.Errorf("invalid identity: %v", err)
	}
	if _, err := multicluster.NewManager(nil, ctrl.Options{}, multicluster.ManagerOptions{}); !errors.Is(err, multicluster.ErrInvalidOptions) {
		t.Errorf("nil config: %v", err)
	}
	if _, err := multicluster.ManagementClusterID(context.Background(), nil); !errors.Is(err, multicluster.ErrInvalidOptions) {
		t.Errorf("nil reader: %v", err)
	}
	inj := faults.NewInjector()
	inj.Arm(faults.VerbGet, 1, faults.Internal)
	if _, err := multicluster.ManagementClusterID(context.Background(), inj.Client(env.Client)); !errors.Is(err, faults.ErrInjected) ||
		!strings.Contains(err.Error(), "Namespace kube-system") {
		t.Errorf("failing read: %v", err)
	}
}

func TestWatchSetupRefusesBadInput(t *testing.T) {
	mgr := localManager(t)
	b := mcbuilder.ControllerManagedBy(mgr)
	targets := func(context.Context, client.ObjectKey) (string, bool) { return "", true }
	mapFn := func(context.Context, client.Object) []crreconcile.Request { return nil }

	_, err := multicluster.AddInputWatch(b, runtime.NewScheme(), targets, &Gadget{}, mapFn)
	if err == nil || !strings.HasPrefix(err.Error(), "resolving input kind for remote watch: ") {
		t.Errorf("unknown input kind: %v", err)
	}
	if _, err := multicluster.AddInputWatch(b, env.Scheme, nil, &Gadget{}, mapFn); !errors.Is(err, multicluster.ErrInvalidOptions) {
		t.Errorf("nil targets: %v", err)
	}
	if _, err := multicluster.AddInputWatch(b, nil, targets, &Gadget{}, mapFn); !errors.Is(err, apply.ErrNilScheme) {
		t.Errorf("nil scheme: %v", err)
	}
	remote := apply.RemoteOwnership{ManagementCluster: "mgmt-a"}
	if _, err := multicluster.AddChildWatches(b, env.Scheme, &Gadget{}, apply.RemoteOwnership{}, &corev1.ConfigMap{}); !errors.Is(err, multicluster.ErrInvalidOptions) {
		t.Errorf("empty identity: %v", err)
	}
	if _, err := multicluster.AddChildWatches(b, runtime.NewScheme(), &Gadget{}, remote, &corev1.ConfigMap{}); err == nil ||
		!strings.Contains(err.Error(), "resolving owner kind") {
		t.Errorf("unknown owner kind: %v", err)
	}
}

func TestTargetClusterOf(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(newScheme()).WithObjects(
		&Gadget{ObjectMeta: metav1.ObjectMeta{Name: "remote", Namespace: "ns"},
			Spec: GadgetSpec{TargetClusterRef: &commonv1.TargetClusterRefSpec{Name: "edge"}}},
		&Gadget{ObjectMeta: metav1.ObjectMeta{Name: "local", Namespace: "ns"}},
	).Build()
	targets := multicluster.TargetClusterOf(c, func() *Gadget { return &Gadget{} },
		func(g *Gadget) *commonv1.TargetClusterRefSpec { return g.Spec.TargetClusterRef })
	for key, want := range map[string]struct {
		cluster string
		found   bool
	}{"remote": {"edge", true}, "local": {"", true}, "gone": {"", false}} {
		cluster, found := targets(context.Background(), client.ObjectKey{Namespace: "ns", Name: key})
		if cluster != want.cluster || found != want.found {
			t.Errorf("%s: got (%q, %v), want (%q, %v)", key, cluster, found, want.cluster, want.found)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("TargetClusterOf with nil arguments did not panic")
		}
	}()
	multicluster.TargetClusterOf[*Gadget](nil, nil, nil)
}

func TestLocalReconcilerDropsRequestsOfOtherClusters(t *testing.T) {
	var got []crreconcile.Request
	r := multicluster.LocalReconciler(crreconcile.Func(func(_ context.Context, req crreconcile.Request) (ctrl.Result, error) {
		got = append(got, req)
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}))
	req := crreconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "g"}}
	res, err := r.Reconcile(context.Background(), mcreconcile.Request{Request: req})
	if err != nil || res.RequeueAfter != time.Second {
		t.Fatalf("local request: %v, %v", res, err)
	}
	res, err = r.Reconcile(context.Background(), mcreconcile.Request{Request: req, ClusterName: "edge"})
	if err != nil || !res.IsZero() {
		t.Fatalf("remote request: %v, %v", res, err)
	}
	if diff := cmp.Diff([]crreconcile.Request{req}, got); diff != "" {
		t.Fatalf("requests passed on (-want +got):\n%s", diff)
	}
}

func TestCacheOptions(t *testing.T) {
	secretOpts := func(o cache.Options) cache.ByObject {
		for obj, by := range o.ByObject {
			if _, ok := obj.(*corev1.Secret); ok {
				return by
			}
		}
		t.Fatal("no Secret entry")
		return cache.ByObject{}
	}
	plain := multicluster.CacheOptions("op", "")
	if by := secretOpts(plain); by.Label == nil || by.Label.String() != apply.ManagedByLabel+"=op" || by.Namespaces != nil {
		t.Fatalf("without clusters namespace: %+v", by)
	}
	all := secretOpts(multicluster.CacheOptions("op", "clusters"))
	if all.Label != nil || all.Namespaces["clusters"].LabelSelector.String() != multicluster.KubeconfigSecretLabel+"=true" ||
		all.Namespaces[cache.AllNamespaces].LabelSelector.String() != apply.ManagedByLabel+"=op" {
		t.Fatalf("all namespaces: %+v", all)
	}
	scoped := multicluster.CacheOptions("op", "clusters", "team")
	by := secretOpts(scoped)
	if _, ok := by.Namespaces[cache.AllNamespaces]; ok || by.Namespaces["team"].LabelSelector.String() != apply.ManagedByLabel+"=op" {
		t.Fatalf("namespace-scoped: %+v", by)
	}
	if _, ok := scoped.DefaultNamespaces["team"]; !ok || len(scoped.DefaultNamespaces) != 1 {
		t.Fatalf("default namespaces = %v, want team only", scoped.DefaultNamespaces)
	}
	// The shared ByObject map of apply.CacheOptions is not modified.
	if by := secretOpts(apply.CacheOptions("op")); by.Namespaces != nil {
		t.Fatal("CacheOptions modified apply.CacheOptions' result")
	}
}

func TestWithTarget(t *testing.T) {
	if multicluster.TargetFrom(context.Background()) != nil {
		t.Fatal("a bare context carries a target")
	}
	edge := &multicluster.Target{Name: "edge"}
	if got := multicluster.TargetFrom(multicluster.WithTarget(context.Background(), edge)); got != edge {
		t.Fatalf("TargetFrom = %v, want %v", got, edge)
	}
}

// localManager builds, without starting it, a manager for the management cluster only
// (no clusters namespace), with the metrics server off.
func localManager(t *testing.T) mcmanager.Manager {
	t.Helper()
	mgr, err := multicluster.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"}}, multicluster.ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

// TestControllerOptions: the options carry the manager's Controller configuration.
func TestControllerOptions(t *testing.T) {
	mgr, err := multicluster.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{MaxConcurrentReconciles: 3, SkipNameValidation: ptr.To(true), RecoverPanic: ptr.To(true)},
	}, multicluster.ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opts := multicluster.ControllerOptions(mgr)
	if opts.MaxConcurrentReconciles != 3 || opts.SkipNameValidation == nil || !*opts.SkipNameValidation ||
		opts.RecoverPanic == nil || !*opts.RecoverPanic {
		t.Fatalf("ControllerOptions = MaxConcurrentReconciles %d, SkipNameValidation %v, RecoverPanic %v; want the manager's 3, true, true",
			opts.MaxConcurrentReconciles, opts.SkipNameValidation, opts.RecoverPanic)
	}
	if got := multicluster.ControllerOptions(localManager(t)); got.MaxConcurrentReconciles != 0 || got.SkipNameValidation != nil {
		t.Fatalf("a manager without Controller configuration gives %+v", got)
	}
}
