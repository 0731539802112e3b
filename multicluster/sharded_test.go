package multicluster_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/shard"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// gadgetPass is one pass a replica ran over a Gadget.
type gadgetPass struct {
	replica    string
	uid        types.UID
	start, end time.Time
}

// shardedReplica is one replica of the sharded Gadget operator.
type shardedReplica struct {
	name  string
	stop  context.CancelFunc
	done  chan error
	mgr   atomic.Pointer[mcmanager.Manager]
	shard atomic.Pointer[shard.Member]
}

// runSharded runs replica name of a Gadget operator with --sharded on e, recording its
// passes in passes.
func runSharded(t *testing.T, e *testenv.Env, ns, name string, mu *sync.Mutex, passes *[]gadgetPass) *shardedReplica {
	t.Helper()
	return runShardedWith(t, e, name, shardedOptions{ns: ns, mu: mu, passes: passes})
}

// shardedOptions configure a replica of runShardedWith.
type shardedOptions struct {
	// ns is the namespace of the Gadgets and of the ring's Leases.
	ns string
	// clustersNS is the namespace of the target clusters' registrations; empty means none.
	clustersNS string
	// mu guards passes, where the replica records each of its passes.
	mu     *sync.Mutex
	passes *[]gadgetPass
	// step returns the pipeline's one step for replica r; nil means configStep.
	step func(r *shardedReplica, cr **multicluster.CRReconciler[*Gadget]) reconcile.Step[*Gadget]
}

// runShardedWith runs replica name of a Gadget operator with --sharded and
// --shard-selectors on e, as so says.
func runShardedWith(t *testing.T, e *testenv.Env, name string, so shardedOptions) *shardedReplica {
	t.Helper()
	ns, mu, passes := so.ns, so.mu, so.passes
	opts := operatorOpts(ns)
	opts.Manager.Scheme = e.Scheme
	opts.LeaderElectionNamespace, opts.Sharded = ns, true
	opts.Shard.Identity, opts.Shard.LeaseDuration, opts.Shard.RenewPeriod = name, 4*time.Second, 500*time.Millisecond
	opts.ShardSelectors = true // served by the gated control plane only
	opts.ClustersNamespace = so.clustersNS
	r := &shardedReplica{name: name, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	go func() {
		r.done <- multicluster.RunOperator(ctx, e.Config, opts, func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
			r.mgr.Store(&mgr)
			r.shard.Store(resolver.Shard())
			var cr *multicluster.CRReconciler[*Gadget]
			step := configStep(&cr)
			if so.step != nil {
				step = so.step(r, &cr)
			}
			p, err := reconcile.NewPipeline(nil, step)
			if err != nil {
				return err
			}
			ropts := multicluster.ReconcilerOptions[*Gadget]{FieldManager: "gadget-operator",
				Wrap: func(next crreconcile.Reconciler) crreconcile.Reconciler {
					return crreconcile.Func(func(ctx context.Context, req crreconcile.Request) (ctrl.Result, error) {
						g := &Gadget{}
						if err := mgr.GetLocalManager().GetClient().Get(ctx, req.NamespacedName, g); err == nil {
							p := gadgetPass{replica: name, uid: g.UID, start: time.Now()}
							defer func() { p.end = time.Now(); mu.Lock(); *passes = append(*passes, p); mu.Unlock() }()
						}
						return next.Reconcile(ctx, req)
					})
				}}
			var observed atomic.Int64
			var prepared atomic.Int32
			if cr, err = multicluster.NewCRReconciler(resolver, p, gadgetKind(&observed, &prepared), ropts); err != nil {
				return err
			}
			b, err := cr.NewController(ctx, mgr)
			if err != nil {
				return err
			}
			return cr.Complete(b)
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-r.done; err != nil {
			t.Errorf("replica %s: %v", name, err)
		}
	})
	return r
}

// An operator on RunOperator with Sharded runs every replica active: three replicas
// over 60 Gadgets each reconcile only the Gadgets of their ranges, never one another's
// at the same time, and every Gadget turns Ready; a replica stopping hands its Gadgets
// to the others, which converge a change of every Gadget. With the API server's
// shardSelector (ShardedListAndWatch on) each replica's cache holds only its slice;
// without it the caches hold every Gadget and the answers are the same.
func TestShardedOperator(t *testing.T) {
	gated, err := testenv.Start(testenv.Options{Scheme: newScheme(), CRDPaths: []string{"testdata/crds"},
		CRDSources: []testenv.CRDSource{}, FeatureGates: []string{"ShardedListAndWatch=true"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gated.Stop() })
	for name, e := range map[string]*testenv.Env{"client-side filtering": env, "server-side selectors": gated} {
		t.Run(name, func(t *testing.T) { testShardedOperator(t, e, e == gated) })
	}
}

func testShardedOperator(t *testing.T, e *testenv.Env, serverSide bool) {
	ns := e.Namespace(t)
	var mu sync.Mutex
	var passes []gadgetPass
	replicas := []*shardedReplica{runSharded(t, e, ns, "a", &mu, &passes), runSharded(t, e, ns, "b", &mu, &passes),
		runSharded(t, e, ns, "c", &mu, &passes)}
	split := shard.Assign([]string{"a", "b", "c"}, 0)
	testenv.Eventually(t, time.Minute, "the ring split among a, b, c", func(context.Context) (bool, error) {
		for _, r := range replicas {
			m := r.shard.Load()
			if m == nil || !cmpRanges(m.Active(), split[r.name]) {
				return false, nil
			}
		}
		return true, nil
	})
	var gadgets []*Gadget
	for i := range 60 {
		g := &Gadget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("g-%d", i), Namespace: ns}, Spec: GadgetSpec{Message: "one"}}
		if err := e.Client.Create(t.Context(), g); err != nil {
			t.Fatal(err)
		}
		gadgets = append(gadgets, g)
	}
	converged := func(message string) {
		t.Helper()
		testenv.Eventually(t, 2*time.Minute, "every Gadget's ConfigMap says "+message, func(ctx context.Context) (bool, error) {
			for _, g := range gadgets {
				cm := &corev1.ConfigMap{}
				if err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: g.Name + "-config"}, cm); err != nil || cm.Data["message"] != message {
					return false, client.IgnoreNotFound(err)
				}
			}
			return true, nil
		})
	}
	converged("one")
	mu.Lock()
	for _, p := range passes {
		if !split[p.replica].Owns(p.uid) {
			t.Errorf("%s reconciled Gadget %s, outside its ranges", p.replica, p.uid)
		}
	}
	mu.Unlock()
	expectChildrenSliced(t, replicas, ns, gadgets, split)
	if serverSide {
		for _, r := range replicas {
			var list GadgetList
			if err := (*r.mgr.Load()).GetLocalManager().GetCache().List(t.Context(), &list, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			for _, g := range list.Items {
				if !split[r.name].Owns(g.UID) {
					t.Errorf("%s's cache holds Gadget %s of another replica", r.name, g.Name)
				}
			}
		}
	}

	replicas[2].stop()
	if err := <-replicas[2].done; err != nil {
		t.Fatalf("replica c stopping: %v", err)
	}
	replicas[2].done <- nil // for the cleanup
	for _, g := range gadgets {
		patch := client.MergeFrom(g.DeepCopyObject().(*Gadget))
		g.Spec.Message = "two"
		if err := e.Client.Patch(t.Context(), g, patch); err != nil {
			t.Fatal(err)
		}
	}
	converged("two")
	expectChildrenSliced(t, replicas[:2], ns, gadgets, shard.Assign([]string{"a", "b"}, 0))
	mu.Lock()
	defer mu.Unlock()
	for i, a := range passes {
		for _, b := range passes[i+1:] {
			if a.uid == b.uid && a.replica != b.replica && a.start.Before(b.end) && b.start.Before(a.end) {
				t.Errorf("Gadget %s reconciled by %s and %s at once", a.uid, a.replica, b.replica)
			}
		}
	}
}

// expectChildrenSliced waits until the cache of each of replicas holds the ConfigMap
// child of every Gadget split assigns it and no other: each child carries its owner's
// bucket label, and the replicas' children informers select their own buckets.
func expectChildrenSliced(t *testing.T, replicas []*shardedReplica, ns string, gadgets []*Gadget, split map[string]shard.Ranges) {
	t.Helper()
	for _, r := range replicas {
		want := map[string]bool{}
		for _, g := range gadgets {
			if split[r.name].Owns(g.UID) {
				want[g.Name+"-config"] = true
			}
		}
		testenv.Eventually(t, time.Minute, r.name+"'s cache holds the children of its Gadgets only", func(ctx context.Context) (bool, error) {
			var list corev1.ConfigMapList
			if err := (*r.mgr.Load()).GetLocalManager().GetCache().List(ctx, &list, client.InNamespace(ns)); err != nil {
				return false, err
			}
			got := map[string]bool{}
			for _, cm := range list.Items {
				ref := metav1.GetControllerOf(&cm)
				if ref == nil || cm.Labels[shard.LabelBucket] != shard.BucketOf(ref.UID) {
					return false, fmt.Errorf("ConfigMap %s: bucket label %q, controller %v", cm.Name, cm.Labels[shard.LabelBucket], ref)
				}
				got[cm.Name] = true
			}
			return maps.Equal(got, want), nil
		})
	}
}

// cmpRanges reports whether a and b are the same ranges.
func cmpRanges(a, b shard.Ranges) bool { return a.String() == b.String() }

// With Sharded, a setup that registers a reconciler without the shard gate (a plain
// controller) is refused before anything runs: every replica would reconcile every CR.
func TestShardedOperatorRefusesAnUngatedSetup(t *testing.T) {
	ns := env.Namespace(t)
	opts := operatorOpts(ns)
	opts.LeaderElectionNamespace, opts.Sharded, opts.Shard.Identity = ns, true, "a"
	err := multicluster.RunOperator(t.Context(), env.Config, opts, func(_ context.Context, mgr mcmanager.Manager, _ *multicluster.ClusterResolver) error {
		return ctrl.NewControllerManagedBy(mgr.GetLocalManager()).Named("plain-gadgets").For(&Gadget{}).
			Complete(crreconcile.Func(func(context.Context, crreconcile.Request) (ctrl.Result, error) { return ctrl.Result{}, nil }))
	})
	if !errors.Is(err, multicluster.ErrInvalidOptions) || !strings.Contains(err.Error(), "--sharded") || !strings.Contains(err.Error(), "shard.Gate") {
		t.Fatalf("RunOperator with Sharded and an ungated setup: %v, want ErrInvalidOptions naming --sharded and shard.Gate", err)
	}
}
