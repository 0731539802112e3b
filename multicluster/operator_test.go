package multicluster_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/shard"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// childrenReady is the Gadget's one sub-condition; the gate reports on it.
const childrenReady = "ChildrenReady"

// gadgetReconciler is the smallest operator with a target cluster: gate, finalizer
// bookkeeping, one ConfigMap child, deletion sweep.
type gadgetReconciler struct {
	client   client.Client
	resolver multicluster.Resolver
	cleanup  *multicluster.Cleanup
	scheme   *runtime.Scheme
	passes   sync.Map // client.ObjectKey -> *atomic.Int64
	// noRecheck ends a converged pass on a target cluster without the periodic requeue,
	// for tests that count the passes events bring.
	noRecheck bool
}

// passesOf returns how many passes the Gadget at key has had.
func (r *gadgetReconciler) passesOf(key client.ObjectKey) int64 {
	n, _ := r.passes.LoadOrStore(key, new(atomic.Int64))
	return n.(*atomic.Int64).Load()
}

func (r *gadgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	n, _ := r.passes.LoadOrStore(req.NamespacedName, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	return reconcile.RunPass(ctx, r.client, req.NamespacedName, &Gadget{},
		reconcile.DefaultPassOptions(childrenReady), r.pass)
}

func (r *gadgetReconciler) pass(ctx context.Context, g *Gadget) (ctrl.Result, error) {
	if g.GetDeletionTimestamp() != nil {
		return r.cleanup.Finalize(ctx, r.client, g, g.Spec.TargetClusterRef)
	}
	target, res, err := multicluster.GateTarget(ctx, r.resolver, g.Spec.TargetClusterRef,
		g.Conditions(), g.Generation, childrenReady)
	if target == nil {
		return res, err
	}
	if err := r.cleanup.Track(ctx, r.client, g, target); err != nil {
		return ctrl.Result{}, err
	}
	if err := apply.EnsureObject(ctx, target.Client, r.scheme, g, childOf(g), apply.FieldManager); err != nil {
		return ctrl.Result{}, err
	}
	where := "the management cluster"
	if !target.IsLocal() {
		where = "target cluster " + target.Name
	}
	reconcile.MarkTrue(g, childrenReady, "ChildrenApplied", "children applied on "+where)
	if r.noRecheck {
		return ctrl.Result{}, nil
	}
	return target.Recheck(), nil
}

// childOf is the ConfigMap a Gadget writes.
func childOf(g *Gadget) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: g.Name + "-config", Namespace: g.Namespace},
		Data:       map[string]string{"message": g.Spec.Message},
	}
}

// inputToGadget maps a ServiceAccount named "input-<gadget>" to that Gadget.
func inputToGadget(_ context.Context, obj client.Object) []crreconcile.Request {
	name, ok := strings.CutPrefix(obj.GetName(), "input-")
	if !ok {
		return nil
	}
	return []crreconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}}}
}

// operator is a running Gadget operator on a management cluster.
type operator struct {
	mgr        mcmanager.Manager
	resolver   *multicluster.ClusterResolver
	rec        *gadgetReconciler
	mgmt       *testenv.Env
	clustersNS string
	// ns is the namespace the operator watches, the one its registrations allow.
	ns string
}

type operatorOptions struct {
	// mgmt is the management cluster; nil means env.
	mgmt *testenv.Env
	// identity is the management cluster's identity; empty means kube-system's UID.
	identity string
	// giveUpAfter bounds the deletion sweep; zero means the default.
	giveUpAfter time.Duration
	// noRecheck: see gadgetReconciler.noRecheck.
	noRecheck bool
	// kubeconfig bounds the kubeconfig Secrets; zero refuses plugins, files and weak TLS.
	kubeconfig multicluster.KubeconfigOptions
	// shard narrows the children on the target clusters (ManagerOptions.Shard); nil
	// narrows nothing.
	shard *shard.Member
}

// startOperator runs the Gadget operator for namespace ns with a fresh clusters
// namespace (o.clustersNS) in which tests register target clusters.
func startOperator(t *testing.T, ns string, o operatorOptions) *operator {
	t.Helper()
	mgmt := o.mgmt
	if mgmt == nil {
		mgmt = env
	}
	clustersNS := mgmt.Namespace(t)
	mgr, err := multicluster.NewManager(mgmt.Config, ctrl.Options{
		Scheme:     mgmt.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:      multicluster.CacheOptions(apply.FieldManager, clustersNS, ns),
		Client:     client.Options{Cache: &client.CacheOptions{DisableFor: reconcile.UncachedObjects()}},
	}, multicluster.ManagerOptions{ClustersNamespace: clustersNS, Kubeconfig: o.kubeconfig, Shard: o.shard})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	resolver, err := multicluster.NewResolver(ctx, mgr, multicluster.ResolverOptions{
		ManagementCluster: o.identity, ReachabilityTTL: time.Second})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cleanup, err := multicluster.NewCleanup(resolver, multicluster.CleanupOptions{
		Children:      []client.ObjectList{&corev1.ConfigMapList{}},
		GiveUpAfter:   o.giveUpAfter,
		Recorder:      mgr.GetLocalManager().GetEventRecorder("gadget-operator"),
		ConditionType: childrenReady,
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	rec := &gadgetReconciler{client: resolver.Local().Client, resolver: resolver, cleanup: cleanup,
		scheme: mgmt.Scheme, noRecheck: o.noRecheck}
	targets := multicluster.TargetClusterOf(mgr.GetLocalManager().GetClient(),
		func() *Gadget { return &Gadget{} },
		func(g *Gadget) *commonv1.TargetClusterRefSpec { return g.Spec.TargetClusterRef })
	b := mcbuilder.ControllerManagedBy(mgr).Named("gadget").
		For(&Gadget{}, mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false),
			mcbuilder.WithPredicates(reconcile.IgnoreStatusWrites())).
		WithOptions(controller.TypedOptions[mcreconcile.Request]{SkipNameValidation: ptr.To(true)})
	if b, err = multicluster.AddChildWatches(b, mgmt.Scheme, &Gadget{}, resolver.Remote(), &corev1.ConfigMap{}); err != nil {
		cancel()
		t.Fatal(err)
	}
	if b, err = multicluster.AddInputWatch(b, mgmt.Scheme, targets, &corev1.ServiceAccount{}, inputToGadget); err != nil {
		cancel()
		t.Fatal(err)
	}
	// An input whose kind only the management cluster serves (the target clusters have
	// no Gadget CRD): its remote leg must skip them rather than break their engagement.
	if b, err = multicluster.AddInputWatch(b, mgmt.Scheme, targets, &Gadget{},
		func(context.Context, client.Object) []crreconcile.Request { return nil }); err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := b.Complete(multicluster.LocalReconciler(rec)); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	if !mgr.GetLocalManager().GetCache().WaitForCacheSync(ctx) {
		t.Fatal("management cache did not sync")
	}
	return &operator{mgr: mgr, resolver: resolver, rec: rec, mgmt: mgmt, clustersNS: clustersNS, ns: ns}
}

// register registers cluster on the operator's clusters namespace under name, for the
// operator's namespace, and waits until the resolver resolves it there.
func (o *operator) register(t *testing.T, cluster *testenv.Env, name string) {
	t.Helper()
	cluster.RegisterTarget(t, o.mgmt, o.clustersNS, name, o.ns)
	o.waitResolves(t, name)
}

// waitResolves waits until the resolver resolves the target cluster name for the
// operator's namespace.
func (o *operator) waitResolves(t *testing.T, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) {
			_, err := o.resolver.Resolve(multicluster.WithNamespace(ctx, o.ns), &commonv1.TargetClusterRefSpec{Name: name})
			return err == nil, nil
		})
	if err != nil {
		t.Fatalf("target cluster %q never resolved: %v", name, err)
	}
}

// newGadget creates a Gadget in ns on the operator's management cluster.
func (o *operator) newGadget(t *testing.T, ns, name, cluster, message string) *Gadget {
	t.Helper()
	g := &Gadget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: GadgetSpec{Message: message}}
	if cluster != "" {
		g.Spec.TargetClusterRef = &commonv1.TargetClusterRefSpec{Name: cluster}
	}
	if err := o.mgmt.Client.Create(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	return g
}

// namespaceOn creates namespace ns on cluster (children land in the CR's namespace
// there, which must exist).
func namespaceOn(t *testing.T, cluster *testenv.Env, ns string) {
	t.Helper()
	err := cluster.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
}

// eventually polls cond every 100 ms for up to timeout and fails the test with what
// when it never holds.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true,
		func(ctx context.Context) (bool, error) {
			ok, err := cond(ctx)
			last = err
			return ok, nil
		})
	if err != nil {
		t.Fatalf("%s: not within %s (last error: %v)", what, timeout, last)
	}
}

// events returns the events regarding obj on cluster, as "type reason: note".
func events(t *testing.T, cluster *testenv.Env, obj client.Object) []string {
	t.Helper()
	var list eventsv1.EventList
	if err := cluster.Client.List(context.Background(), &list, client.InNamespace(obj.GetNamespace())); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == obj.GetName() && e.Regarding.UID == obj.GetUID() {
			out = append(out, e.Type+" "+e.Reason+": "+e.Note)
		}
	}
	return out
}
