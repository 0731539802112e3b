package operator_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/operator"
	"github.com/c5c3/reconciler-sdk/shard"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// shardedOptions are testOptions of replica name of a sharded operator: its ring's
// Leases in ns, a 4 s Lease renewed every 500 ms.
func shardedOptions(ns, name string) operator.Options {
	opts := testOptions(ns)
	opts.Sharded, opts.LeaderElectionNamespace = true, ns
	opts.Shard.Identity, opts.Shard.LeaseDuration, opts.Shard.RenewPeriod = name, 4*time.Second, 500*time.Millisecond
	return opts
}

// With Sharded, a setup that registers a reconciler without the shard gate is refused
// before anything runs: every replica would reconcile every ServiceAccount. The setup
// got the member (Operator.Shard).
func TestRunShardedRefusesAnUngatedSetup(t *testing.T) {
	ns := env.Namespace(t)
	var member *shard.Member
	err := operator.Run(t.Context(), env.Config, shardedOptions(ns, "a"), func(ctx context.Context, op operator.Operator) error {
		member = op.Shard
		return setupGreeter(ctx, op)
	})
	if !errors.Is(err, operator.ErrInvalidOptions) || !strings.Contains(err.Error(), "--sharded") || !strings.Contains(err.Error(), "shard.Gate") {
		t.Fatalf("Run with Sharded and an ungated setup = %v, want ErrInvalidOptions naming --sharded and shard.Gate", err)
	}
	if member == nil || member.Identity() != "a" {
		t.Errorf("the setup's Operator.Shard = %v, want the member a", member)
	}
}

// Without Sharded the setup gets no shard member.
func TestRunUnshardedHasNoShard(t *testing.T) {
	ns := env.Namespace(t)
	sentinel := errors.New("setup seen")
	err := operator.Run(t.Context(), env.Config, testOptions(ns), func(_ context.Context, op operator.Operator) error {
		if op.Shard != nil {
			return fmt.Errorf("Operator.Shard = %v without Sharded, want nil", op.Shard)
		}
		return sentinel
	})
	if !errors.Is(err, sentinel) {
		t.Fatal(err)
	}
}

// Outside a cluster a sharded operator needs a namespace for its ring's Leases, and says
// which flag gives it.
func TestRunShardedNeedsANamespaceOutsideACluster(t *testing.T) {
	if _, err := os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
		t.Skip("running in a pod: the ring's namespace is the pod's own")
	}
	opts := shardedOptions(env.Namespace(t), "a")
	opts.LeaderElectionNamespace = ""
	err := operator.Run(t.Context(), env.Config, opts, func(context.Context, operator.Operator) error { return nil })
	if !errors.Is(err, operator.ErrInvalidOptions) || !strings.Contains(err.Error(), "--leader-election-namespace") {
		t.Fatalf("Run with Sharded outside a cluster without a namespace = %v, want ErrInvalidOptions naming --leader-election-namespace", err)
	}
}

// greetingPass is one pass a replica ran over a ServiceAccount, past the shard gate.
type greetingPass struct {
	replica    string
	uid        types.UID
	start, end time.Time
}

// shardedGreeter is one replica of a sharded operator whose reconciler gives every
// ServiceAccount a ConfigMap "<name>-greeting" with the ServiceAccount's "greeting"
// annotation.
type shardedGreeter struct {
	name string
	stop context.CancelFunc
	done chan error
	op   atomic.Pointer[operator.Operator]
}

// serviceAccounts and configMaps are the resources the sharded greeter reconciles and
// writes.
var (
	serviceAccounts = schema.GroupResource{Resource: "serviceaccounts"}
	configMaps      = schema.GroupResource{Resource: "configmaps"}
)

// runShardedGreeter runs replica name on e with operator.Run and opts, wired as package
// shard describes: the reconciler gated, the children kind registered with SelectOwned,
// and the ServiceAccounts requeued on a range gained (client-side) or selected by the
// API server (server-side). Its passes are recorded in passes.
func runShardedGreeter(t *testing.T, e *testenv.Env, opts operator.Options, name string, mu *sync.Mutex, passes *[]greetingPass) *shardedGreeter {
	t.Helper()
	r := &shardedGreeter{name: name, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	go func() {
		r.done <- operator.Run(ctx, e.Config, opts, func(_ context.Context, op operator.Operator) error {
			r.op.Store(&op)
			var rec crreconcile.Reconciler = ctrlFunc(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
				sa := &corev1.ServiceAccount{}
				if err := op.Applier.Get(ctx, req.NamespacedName, sa); err != nil {
					return ctrl.Result{}, client.IgnoreNotFound(err)
				}
				p := greetingPass{replica: name, uid: sa.UID, start: time.Now()}
				defer func() { p.end = time.Now(); mu.Lock(); *passes = append(*passes, p); mu.Unlock() }()
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: sa.Namespace, Name: sa.Name + "-greeting"},
					Data: map[string]string{"greeting": sa.Annotations["greeting"]}}
				return ctrl.Result{}, apply.EnsureObject(ctx, op.Applier, op.Scheme, sa, cm, opts.FieldManager)
			})
			rec = shard.Gate(op.Shard, op.Manager.GetClient(), func() *corev1.ServiceAccount { return &corev1.ServiceAccount{} }, rec)
			op.Shard.SelectOwned(configMaps)
			b := ctrl.NewControllerManagedBy(op.Manager).Named("sharded-greeter").For(&corev1.ServiceAccount{}).Owns(&corev1.ConfigMap{})
			if op.Shard.ServerSide() {
				op.Shard.Select(serviceAccounts)
			} else {
				b = b.WatchesRawSource(shard.Requeue(op.Shard, op.Manager.GetClient(), func() client.ObjectList { return &corev1.ServiceAccountList{} }))
			}
			return b.Complete(rec)
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

// ctrlFunc is a reconciler of a function.
type ctrlFunc func(context.Context, ctrl.Request) (ctrl.Result, error)

func (f ctrlFunc) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return f(ctx, req)
}

// Three replicas of an operator on Run with Sharded each reconcile only the
// ServiceAccounts of their ranges, never one another's at the same time, and every
// ServiceAccount gets its ConfigMap, labelled with its owner's bucket; when one replica
// stops, the others take its ServiceAccounts over and converge a change of every one.
// With ShardSelectors each replica's cache holds only the ConfigMaps of its slice, on
// any API server, and where the API server serves shardSelector (ShardedListAndWatch)
// only the ServiceAccounts of its slice too; without it the caches hold everything and
// the answers are the same.
func TestRunSharded(t *testing.T) {
	gated, err := testenv.Start(testenv.Options{CRDSources: []testenv.CRDSource{}, FeatureGates: []string{"ShardedListAndWatch=true"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gated.Stop() })
	for _, tc := range []struct {
		name       string
		e          *testenv.Env
		selectors  bool
		serverSide bool
	}{
		{"client-side filtering", env, false, false},
		{"children selected by bucket", env, true, false},
		{"server-side selectors", gated, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) { testRunSharded(t, tc.e, tc.selectors, tc.serverSide) })
	}
}

func testRunSharded(t *testing.T, e *testenv.Env, selectors, serverSide bool) {
	ns := e.Namespace(t)
	var mu sync.Mutex
	var passes []greetingPass
	var replicas []*shardedGreeter
	for _, name := range []string{"a", "b", "c"} {
		opts := shardedOptions(ns, name)
		opts.Manager.Scheme, opts.ShardSelectors = e.Scheme, selectors
		replicas = append(replicas, runShardedGreeter(t, e, opts, name, &mu, &passes))
	}
	split := shard.Assign([]string{"a", "b", "c"}, 0)
	testenv.Eventually(t, time.Minute, "the ring split among a, b, c", func(context.Context) (bool, error) {
		for _, r := range replicas {
			op := r.op.Load()
			if op == nil || op.Shard.Active().String() != split[r.name].String() {
				return false, nil
			}
		}
		return true, nil
	})
	for _, r := range replicas {
		if got := r.op.Load().Shard.ServerSide(); got != serverSide {
			t.Errorf("replica %s: ServerSide() = %v, want %v", r.name, got, serverSide)
		}
	}
	var sas []*corev1.ServiceAccount
	for i := range 36 {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sa-%d", i), Namespace: ns,
			Annotations: map[string]string{"greeting": "hello"}}}
		if err := e.Client.Create(t.Context(), sa); err != nil {
			t.Fatal(err)
		}
		sas = append(sas, sa)
	}
	converged := func(greeting string) {
		t.Helper()
		testenv.Eventually(t, 2*time.Minute, "every ServiceAccount's ConfigMap says "+greeting, func(ctx context.Context) (bool, error) {
			for _, sa := range sas {
				cm := &corev1.ConfigMap{}
				if err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: sa.Name + "-greeting"}, cm); err != nil || cm.Data["greeting"] != greeting {
					return false, client.IgnoreNotFound(err)
				}
			}
			return true, nil
		})
	}
	converged("hello")
	mu.Lock()
	reconciled := map[string]int{}
	for _, p := range passes {
		reconciled[p.replica]++
		if !split[p.replica].Owns(p.uid) {
			t.Errorf("%s reconciled ServiceAccount %s, outside its ranges", p.replica, p.uid)
		}
	}
	mu.Unlock()
	for _, r := range replicas {
		if reconciled[r.name] == 0 {
			t.Errorf("replica %s reconciled no ServiceAccount", r.name)
		}
	}
	for _, sa := range sas {
		cm := &corev1.ConfigMap{}
		if err := e.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: sa.Name + "-greeting"}, cm); err != nil {
			t.Fatal(err)
		}
		if want := shard.OwnerLabels(sa.UID)[shard.LabelBucket]; cm.Labels[shard.LabelBucket] != want {
			t.Errorf("ConfigMap %s: bucket label %q, want its owner's %q", cm.Name, cm.Labels[shard.LabelBucket], want)
		}
	}
	for _, r := range replicas {
		cache := r.op.Load().Manager.GetCache()
		var cms corev1.ConfigMapList
		if err := cache.List(t.Context(), &cms, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		owners := map[string]types.UID{}
		for _, sa := range sas {
			owners[sa.Name+"-greeting"] = sa.UID
		}
		held, foreign := 0, 0
		for _, cm := range cms.Items {
			uid, ok := owners[cm.Name]
			if !ok {
				continue
			}
			held++
			if !split[r.name].Owns(uid) {
				foreign++
			}
		}
		if selectors && foreign > 0 {
			t.Errorf("%s's cache holds %d ConfigMaps of other replicas' ServiceAccounts", r.name, foreign)
		}
		if !selectors && held != len(sas) {
			t.Errorf("%s's cache holds %d greeting ConfigMaps, want all %d without selectors", r.name, held, len(sas))
		}
		var list corev1.ServiceAccountList
		if err := cache.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		heldSAs := 0
		for _, sa := range list.Items {
			if _, ok := owners[sa.Name+"-greeting"]; !ok {
				continue
			}
			heldSAs++
			if serverSide && !split[r.name].Owns(sa.UID) {
				t.Errorf("%s's cache holds ServiceAccount %s of another replica", r.name, sa.Name)
			}
		}
		if !serverSide && heldSAs != len(sas) {
			t.Errorf("%s's cache holds %d of the ServiceAccounts, want all %d without server-side selectors", r.name, heldSAs, len(sas))
		}
	}

	replicas[2].stop()
	if err := <-replicas[2].done; err != nil {
		t.Fatalf("replica c stopping: %v", err)
	}
	replicas[2].done <- nil // for the cleanup
	for _, sa := range sas {
		patch := client.MergeFrom(sa.DeepCopy())
		sa.Annotations["greeting"] = "bye"
		if err := e.Client.Patch(t.Context(), sa, patch); err != nil {
			t.Fatal(err)
		}
	}
	converged("bye")
	mu.Lock()
	defer mu.Unlock()
	for i, a := range passes {
		for _, b := range passes[i+1:] {
			if a.uid == b.uid && a.replica != b.replica && a.start.Before(b.end) && b.start.Before(a.end) {
				t.Errorf("ServiceAccount %s reconciled by %s and %s at once", a.uid, a.replica, b.replica)
			}
		}
	}
}
