package shard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	. "github.com/c5c3/reconciler-sdk/shard"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// pass is one reconcile a replica ran, of the object of uid, at the generation-like
// label "round" it read.
type pass struct {
	replica    string
	uid        types.UID
	round      string
	start, end time.Time
}

// passLog records the passes of every replica.
type passLog struct {
	mu     sync.Mutex
	passes []pass
}

func (l *passLog) add(p pass) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.passes = append(l.passes, p)
}

// of returns the passes that read round.
func (l *passLog) of(round string) []pass {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []pass
	for _, p := range l.passes {
		if p.round == round {
			out = append(out, p)
		}
	}
	return out
}

// overlaps returns a description of two replicas' passes over one object that ran at
// the same time, "" when there are none.
func (l *passLog) overlaps() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	byUID := map[types.UID][]pass{}
	for _, p := range l.passes {
		byUID[p.uid] = append(byUID[p.uid], p)
	}
	for uid, ps := range byUID {
		for i, a := range ps {
			for _, b := range ps[i+1:] {
				if a.replica != b.replica && a.start.Before(b.end) && b.start.Before(a.end) {
					return fmt.Sprintf("%s reconciled by %s and %s at once", uid, a.replica, b.replica)
				}
			}
		}
	}
	return ""
}

// operator is one replica: a manager whose ConfigMap controller is gated by its member.
type operator struct {
	*replica
	stopManager func() error
	cache       client.Reader
}

// startOperator runs replica identity of a ConfigMap controller of ns, gated by a
// member of the ring, recording its passes in log. serverSide makes its informers list
// and watch only its slice (Member.ServerSideTransport).
func startOperator(t *testing.T, ns, identity string, log *passLog, serverSide bool) *operator {
	t.Helper()
	r := start(t, ns, identity)
	cfg := rest.CopyConfig(env.Config)
	if serverSide {
		cfg.Wrap(r.ServerSideTransport(schema.GroupResource{Resource: "configmaps"}))
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0", Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(t.Context()) {
		t.Fatal("cache not synced")
	}
	var once sync.Once
	var stopErr error
	stop := func() error { once.Do(func() { cancel(); stopErr = <-stopped }); return stopErr }
	o := &operator{replica: r, stopManager: stop, cache: mgr.GetCache()}
	t.Cleanup(func() { _ = o.stopManager() })
	inner := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		cm := &corev1.ConfigMap{}
		if err := mgr.GetClient().Get(ctx, req.NamespacedName, cm); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		p := pass{replica: identity, uid: cm.UID, round: cm.Labels["round"], start: time.Now()}
		time.Sleep(5 * time.Millisecond) // a pass takes time: overlaps would show
		p.end = time.Now()
		log.add(p)
		return reconcile.Result{}, nil
	})
	// A list again replays the objects kept as updates of an unchanged resourceVersion:
	// the predicate drops them, as a sharded controller should.
	b := builder.ControllerManagedBy(mgr).Named("configmaps").For(&corev1.ConfigMap{},
		builder.WithPredicates(predicate.ResourceVersionChangedPredicate{}))
	if !serverSide { // a server-side informer lists again on a change: the gained objects arrive as additions
		b = b.WatchesRawSource(Requeue(r.Member, mgr.GetClient(), func() client.ObjectList { return &corev1.ConfigMapList{} }))
	}
	err = b.Complete(Gate(r.Member, mgr.GetClient(), func() *corev1.ConfigMap { return &corev1.ConfigMap{} }, inner))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// Three replicas of a controller, each gated by its member, over 2,000 objects: after a
// change of every object each object is reconciled exactly once, by the replica that
// owns it, and never by two replicas at once. A replica killed (its Lease left to
// expire) right before a change has its objects reconciled by the others when they
// take its ranges over: they dropped those objects' events, and the requeue of the
// ranges they gain brings them back. A fourth replica joining during a change takes its
// share without any object reconciled by two at once.
func TestGatedReplicas(t *testing.T) {
	for name, serverSide := range map[string]bool{"client-side": false, "server-side": true} {
		t.Run(name, func(t *testing.T) { testGatedReplicas(t, serverSide) })
	}
}

func testGatedReplicas(t *testing.T, serverSide bool) {
	ns := env.Namespace(t)
	log := &passLog{}
	a, b, c := startOperator(t, ns, "a", log, serverSide), startOperator(t, ns, "b", log, serverSide), startOperator(t, ns, "c", log, serverSide)
	expectSplit(t, time.Minute, a.replica, b.replica, c.replica)
	const n = 2000
	var cms []*corev1.ConfigMap
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cr-%d", i), Labels: map[string]string{"round": "0"}}}
		if err := env.Client.Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
		cms = append(cms, cm)
	}
	change := func(round string) {
		t.Helper()
		for _, cm := range cms {
			patch := client.MergeFrom(cm.DeepCopy())
			cm.Labels["round"] = round
			if err := env.Client.Patch(t.Context(), cm, patch); err != nil {
				t.Fatal(err)
			}
		}
	}
	// everyOnce waits until every object was reconciled at round, then checks that
	// owners did it and, when exactly, that no object was reconciled twice there.
	everyOnce := func(round string, owners map[string]Ranges, exactly bool) {
		t.Helper()
		testenv.Eventually(t, 2*time.Minute, "every object reconciled at round "+round, func(context.Context) (bool, error) {
			done := map[types.UID]bool{}
			for _, p := range log.of(round) {
				done[p.uid] = true
			}
			return len(done) == n, nil
		})
		time.Sleep(time.Second) // late duplicates would show by now
		count := map[types.UID]int{}
		for _, p := range log.of(round) {
			count[p.uid]++
			if !owners[p.replica].Owns(p.uid) {
				t.Errorf("round %s: %s reconciled %s, which it does not own", round, p.replica, p.uid)
			}
		}
		for uid, k := range count {
			if exactly && k != 1 {
				t.Errorf("round %s: %s reconciled %d times, want once", round, uid, k)
			}
		}
	}
	// slices: with server-side selectors each replica's cache holds exactly the objects
	// of its ranges; filtering on the client, every replica's cache holds them all.
	slices := func(ops ...*operator) {
		t.Helper()
		testenv.Eventually(t, time.Minute, "each cache holding its slice", func(ctx context.Context) (bool, error) {
			for _, o := range ops {
				var list corev1.ConfigMapList
				if err := o.cache.List(ctx, &list, client.InNamespace(ns)); err != nil {
					return false, err
				}
				owned := 0
				for _, cm := range cms {
					if !serverSide || o.Active().Owns(cm.UID) {
						owned++
					}
				}
				mine := 0
				for _, cm := range list.Items {
					if !serverSide || o.Active().Owns(cm.UID) {
						mine++
					}
				}
				if mine != len(list.Items) || owned != len(list.Items) {
					return false, nil
				}
			}
			return true, nil
		})
	}
	slices(a, b, c)
	change("1")
	everyOnce("1", Assign([]string{"a", "b", "c"}, 0), true)

	c.kill()
	_ = c.stopManager()
	change("2") // before the others take c's ranges over: they drop its objects' events
	expectSplit(t, time.Minute, a.replica, b.replica)
	// The change races the takeover: an object changed after its new owner gained its
	// range may be reconciled twice by that owner, once from the requeue of the range
	// and once from its own event (one after the other, never by two replicas at once:
	// the overlap check below covers the whole test).
	everyOnce("2", Assign([]string{"a", "b"}, 0), false)
	slices(a, b)

	// A fourth replica joins while every object changes: ranges move to it, every
	// object is reconciled at least once, and never by two replicas at once (checked
	// below for the whole test); once the split settled, a change is reconciled exactly
	// once again, by the new owners.
	d := startOperator(t, ns, "d", log, serverSide)
	change("3")
	expectSplit(t, time.Minute, a.replica, b.replica, d.replica)
	testenv.Eventually(t, 2*time.Minute, "every object reconciled at round 3", func(context.Context) (bool, error) {
		done := map[types.UID]bool{}
		for _, p := range log.of("3") {
			done[p.uid] = true
		}
		return len(done) == n, nil
	})
	change("4")
	everyOnce("4", Assign([]string{"a", "b", "d"}, 0), true)
	slices(a, b, d)
	if o := log.overlaps(); o != "" {
		t.Error(o)
	}
}
