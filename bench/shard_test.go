package bench_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/shard"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// benchShardCRs is how many ShardApps the sharding comparison of the report creates.
func benchShardCRs() int { return envInts("BENCH_SHARD_CRS", []int{300})[0] }

// shardWay is one of the three ways of running the ShardApp operator that the sharding
// comparison sets side by side.
type shardWay string

const (
	// oneReplica: one replica, not sharded; its informers hold every ShardApp.
	oneReplica shardWay = "1 replica"
	// serverSide: three replicas in a ring, each CR informer listing and watching only
	// its replica's slice with the API server's shardSelector.
	serverSide shardWay = "3 replicas, server-side selectors"
	// clientSide: three replicas in a ring, every CR informer holding every ShardApp and
	// shard.Gate dropping the other replicas' requests.
	clientSide shardWay = "3 replicas, client-side filtering"
)

// shardWays lists the ways in the order the report shows them.
var shardWays = []shardWay{oneReplica, serverSide, clientSide}

// replicas is how many replicas the way runs.
func (w shardWay) replicas() int {
	if w == oneReplica {
		return 1
	}
	return 3
}

// shardFieldManager is the ShardApp operator's field manager, and the name of its ring.
const shardFieldManager = "shardapp-operator"

// Shard ring timing of the comparison: a replica's slice is taken over by the others
// about one LeaseDuration after it stopped renewing.
const (
	shardLeaseDuration = 4 * time.Second
	shardRenewPeriod   = 500 * time.Millisecond
)

// shardReplicaNames are the replicas' identities in the ring, named like a StatefulSet's
// pods; the ring's split, and so each replica's share, follows from them.
var shardReplicaNames = []string{"shardapp-operator-0", "shardapp-operator-1", "shardapp-operator-2"}

// shardAppsResource is the path segment of the ShardApp collection.
const shardAppsResource = "shardapps"

// crTraffic counts, on one replica's rest.Config, what the API server sent it for the
// ShardApp collection, and every request but the ring's Lease traffic. Once cut, it
// fails every request, as if the replica lost the network.
type crTraffic struct {
	watchEvents atomic.Int64 // newline-delimited JSON frames of ShardApp watches
	watchBytes  atomic.Int64 // bytes read from ShardApp watch bodies
	listBytes   atomic.Int64 // bytes read from ShardApp list bodies
	requests    atomic.Int64 // requests other than coordination.k8s.io (the ring's Leases)
	cut         atomic.Bool
}

// reset zeroes the counts.
func (c *crTraffic) reset() {
	c.watchEvents.Store(0)
	c.watchBytes.Store(0)
	c.listBytes.Store(0)
	c.requests.Store(0)
}

// wrap is the rest.Config wrapper that counts.
func (c *crTraffic) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if c.cut.Load() {
			return nil, errors.New("bench: replica cut off")
		}
		if !strings.HasPrefix(req.URL.Path, "/apis/coordination.k8s.io/") {
			c.requests.Add(1)
		}
		resp, err := next.RoundTrip(req)
		if err != nil || req.Method != http.MethodGet || !isShardAppCollection(req.URL.Path) {
			return resp, err
		}
		q := req.URL.Query()
		if q.Get("watch") == "true" || q.Get("watch") == "1" {
			resp.Body = &countingBody{ReadCloser: resp.Body, bytes: &c.watchBytes, frames: &c.watchEvents}
		} else {
			resp.Body = &countingBody{ReadCloser: resp.Body, bytes: &c.listBytes}
		}
		return resp, nil
	})
}

// isShardAppCollection reports whether path is the ShardApp collection, of all
// namespaces or one.
func isShardAppCollection(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) < 4 || parts[0] != "apis" || parts[1] != benchAppGV.Group {
		return false
	}
	tail := parts[3:]
	return (len(tail) == 1 && tail[0] == shardAppsResource) ||
		(len(tail) == 3 && tail[0] == "namespaces" && tail[2] == shardAppsResource)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// countingBody counts the bytes read from a response body and, when frames is set, the
// newlines among them: one per event of a JSON watch stream.
type countingBody struct {
	io.ReadCloser
	bytes, frames *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.bytes.Add(int64(n))
	if b.frames != nil {
		b.frames.Add(int64(bytes.Count(p[:n], []byte{'\n'})))
	}
	return n, err
}

// shardReplica is one running replica of the ShardApp operator.
type shardReplica struct {
	name    string
	traffic *crTraffic
	stop    context.CancelFunc
	done    chan error
	ready   chan struct{} // closed once the setup ran
	mgr     mcmanager.Manager
	member  *shard.Member // nil when not sharded
	// reconciler is the replica's pass over one ShardApp, gated by its member as its
	// controller's is.
	reconciler crreconcile.Reconciler
}

// shardAppKind is the CRKind of ShardApp: always on the management cluster.
func shardAppKind() multicluster.CRKind[*ShardApp] {
	return multicluster.CRKind[*ShardApp]{Name: "shardapp", GateCondition: "ConfigReady",
		New:              func() *ShardApp { return &ShardApp{} },
		TargetClusterRef: func(*ShardApp) *commonv1.TargetClusterRefSpec { return nil }}
}

// shardConfigStep applies the ShardApp's ConfigMap, its one child.
func shardConfigStep(r **multicluster.CRReconciler[*ShardApp]) reconcile.Step[*ShardApp] {
	return reconcile.Step[*ShardApp]{Name: "Config", Condition: "ConfigReady", Owns: []client.Object{&corev1.ConfigMap{}},
		Run: func(ctx context.Context, a *ShardApp) (ctrl.Result, error) {
			target := (*r).TargetOf(ctx)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: a.Name + "-config", Namespace: a.Namespace},
				Data: map[string]string{"message": a.Spec.Message}}
			if err := apply.EnsureObject(ctx, target.Client, target.Client.Scheme(), a, cm, apply.FieldManager); err != nil {
				return ctrl.Result{}, err
			}
			reconcile.MarkTrue(a, "ConfigReady", "ConfigApplied", "")
			return ctrl.Result{}, nil
		}}
}

// startShardReplica starts replica name of way w on e, its operator and ring confined
// to ns, and returns once its setup ran.
func startShardReplica(e *testenv.Env, w shardWay, ns, name string) (*shardReplica, error) {
	opts := multicluster.DefaultOperatorOptions()
	opts.FieldManager, opts.LeaderElectionID = shardFieldManager, shardFieldManager+".bench"
	opts.MetricsBindAddress, opts.HealthProbeBindAddress = "0", "0"
	opts.Manager.Scheme = e.Scheme
	opts.Manager.Controller.SkipNameValidation = ptr.To(true)
	opts.Namespace, opts.LeaderElectionNamespace, opts.LeaderElect = ns, ns, false
	if w != oneReplica {
		opts.Sharded, opts.ShardSelectors = true, w == serverSide
		opts.Shard.Identity, opts.Shard.LeaseDuration, opts.Shard.RenewPeriod = name, shardLeaseDuration, shardRenewPeriod
	}
	r := &shardReplica{name: name, traffic: &crTraffic{}, done: make(chan error, 1), ready: make(chan struct{})}
	cfg := rest.CopyConfig(e.Config)
	cfg.Wrap(r.traffic.wrap)
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	go func() {
		r.done <- multicluster.RunOperator(ctx, cfg, opts, func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
			var cr *multicluster.CRReconciler[*ShardApp]
			p, err := reconcile.NewPipeline(nil, shardConfigStep(&cr))
			if err != nil {
				return err
			}
			if cr, err = multicluster.NewCRReconciler(resolver, p, shardAppKind(),
				multicluster.ReconcilerOptions[*ShardApp]{FieldManager: shardFieldManager}); err != nil {
				return err
			}
			b, err := cr.NewController(ctx, mgr)
			if err != nil {
				return err
			}
			r.mgr, r.member, r.reconciler = mgr, resolver.Shard(), cr
			if r.member != nil {
				r.reconciler = shard.Gate(r.member, mgr.GetLocalManager().GetClient(), shardAppKind().New, cr)
			}
			close(r.ready)
			return cr.Complete(b)
		})
	}()
	select {
	case <-r.ready:
		return r, nil
	case err := <-r.done:
		cancel()
		return nil, fmt.Errorf("replica %s: %w", name, err)
	}
}

// halt stops r and waits for it; a replica cut off may report the failures of its way
// out, which halt drops when cut is set.
func (r *shardReplica) halt() error {
	r.stop()
	err := <-r.done
	r.done <- nil // a second halt returns at once
	if r.traffic.cut.Load() {
		return nil
	}
	return err
}

// cachedApps lists the ShardApps of ns in r's cache.
func (r *shardReplica) cachedApps(ctx context.Context, ns string) (*ShardAppList, error) {
	list := &ShardAppList{}
	return list, r.mgr.GetLocalManager().GetCache().List(ctx, list, client.InNamespace(ns))
}

// shardResult is what the comparison measures for one replica of one way.
type shardResult struct {
	way     shardWay
	replica string
	crs     int
	// share is the fraction of the hash space the replica held once every ShardApp was
	// Ready (1 when not sharded).
	share float64

	// From the ShardApps' creation until every one was Ready: the ShardApp watch events
	// (frames) the replica received, the bytes of those watches and of its ShardApp lists.
	watchEvents, watchBytes, listBytes int64
	// cached is how many ShardApps the replica's cache held once all were Ready, and
	// heap the bytes a copy of them takes (the heap the cache holds for them).
	cached int
	heap   int64
	// convergeTime runs from the first ShardApp's creation until every one was Ready;
	// the same for every replica of a way.
	convergeTime time.Duration
	// passRequests is the requests the replica sent during a pass over every ShardApp
	// its cache holds, once converged (the ring's Lease traffic aside).
	passRequests int64
	// takeover is, for the replica killed, the time from its cut until the others'
	// active ranges covered the whole hash space; zero for the others and when
	// not sharded.
	takeover time.Duration
}

// measureShardWay runs way w over n ShardApps in a fresh namespace of e and returns one
// result per replica. With kill it then cuts the last replica off and measures how long
// the others take to cover its slice.
func measureShardWay(ctx context.Context, tb testing.TB, e *testenv.Env, w shardWay, n int, kill bool) ([]shardResult, error) {
	ns := e.Namespace(tb)
	names := shardReplicaNames[:w.replicas()]
	var replicas []*shardReplica
	defer func() {
		for _, r := range replicas {
			_ = r.halt()
		}
	}()
	for _, name := range names {
		r, err := startShardReplica(e, w, ns, name)
		if err != nil {
			return nil, err
		}
		replicas = append(replicas, r)
	}
	if w != oneReplica {
		split := shard.Assign(names, 0)
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, settleTimeout, true, func(context.Context) (bool, error) {
			for _, r := range replicas {
				if r.member.Active().String() != split[r.name].String() {
					return false, nil
				}
			}
			return true, nil
		}); err != nil {
			return nil, fmt.Errorf("%s: the ring never split: %w", w, err)
		}
	}
	// The informers have synced and the ring is settled: count the workload only.
	for _, r := range replicas {
		r.traffic.reset()
	}
	start := time.Now()
	if err := parallel(n, func(i int) error {
		return e.Client.Create(ctx, &ShardApp{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%05d", i), Namespace: ns},
			Spec: ShardAppSpec{Message: "one"}})
	}); err != nil {
		return nil, err
	}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, settleTimeout, true, func(ctx context.Context) (bool, error) {
		list := &ShardAppList{}
		if err := e.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for i := range list.Items {
			if !apimeta.IsStatusConditionTrue(list.Items[i].Status.Conditions, reconcile.ConditionReady) {
				return false, nil
			}
		}
		return len(list.Items) == n, nil
	}); err != nil {
		return nil, fmt.Errorf("%s: the ShardApps never turned Ready: %w", w, err)
	}
	convergeTime := time.Since(start)

	out := make([]shardResult, len(replicas))
	for i, r := range replicas {
		res := shardResult{way: w, replica: r.name, crs: n, convergeTime: convergeTime, share: 1,
			watchEvents: r.traffic.watchEvents.Load(), watchBytes: r.traffic.watchBytes.Load(), listBytes: r.traffic.listBytes.Load()}
		var err error
		if res.heap, res.cached, err = r.cacheHeap(ctx, ns); err != nil {
			return nil, err
		}
		if r.member != nil {
			res.share = r.member.Active().Size()
		}
		out[i] = res
	}
	// A converged pass: every replica reconciles every ShardApp its cache holds, as a
	// resync would; a converged one costs no request.
	for i, r := range replicas {
		list, err := r.cachedApps(ctx, ns)
		if err != nil {
			return nil, err
		}
		r.traffic.reset()
		for j := range list.Items {
			req := crreconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[j])}
			if _, err := r.reconciler.Reconcile(ctx, req); err != nil {
				return nil, fmt.Errorf("%s: replica %s: converged pass over %s: %w", w, r.name, req, err)
			}
		}
		out[i].passRequests = r.traffic.requests.Load()
	}

	if kill && w != oneReplica {
		victim, others := replicas[len(replicas)-1], replicas[:len(replicas)-1]
		start := time.Now()
		victim.traffic.cut.Store(true)
		victim.stop()
		if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, settleTimeout, true, func(context.Context) (bool, error) {
			var covered shard.Ranges
			for _, r := range others {
				covered = shard.Union(covered, r.member.Active())
			}
			return covered.String() == shard.Full().String(), nil
		}); err != nil {
			return nil, fmt.Errorf("%s: replica %s's slice was never taken over: %w", w, victim.name, err)
		}
		out[len(out)-1].takeover = time.Since(start)
	}
	var errs []error
	for _, r := range replicas {
		errs = append(errs, r.halt())
	}
	replicas = nil
	return out, errors.Join(errs...)
}

// startGated starts a control plane of its own with the ShardedListAndWatch feature
// gate on (the API server then serves shardSelector) and the bench's CRDs; it stops with
// tb.
func startGated(tb testing.TB) *testenv.Env {
	tb.Helper()
	e, err := testenv.Start(testenv.Options{Scheme: newScheme(), CRDPaths: []string{"testdata/crds"},
		CRDSources: []testenv.CRDSource{}, FeatureGates: []string{"ShardedListAndWatch=true"}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = e.Stop() })
	return e
}

// measureSharding runs the three ways one after the other over n ShardApps on one
// gated control plane.
func measureSharding(ctx context.Context, tb testing.TB, n int, kill bool) ([]shardResult, error) {
	e := startGated(tb)
	var out []shardResult
	for _, w := range shardWays {
		rs, err := measureShardWay(ctx, tb, e, w, n, kill)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

// shardTestCRs is the size of the workload in TestShardedReplicasReceiveTheirSlice.
const shardTestCRs = 30

// TestShardedReplicasReceiveTheirSlice: over the same ShardApps, each of three replicas
// sharded with server-side selectors receives fewer ShardApp watch events and caches
// fewer ShardApps than a single replica; with client-side filtering each receives and
// caches as many as the single replica; and a converged pass sends no request in any
// way.
func TestShardedReplicasReceiveTheirSlice(t *testing.T) {
	results, err := measureSharding(context.Background(), t, shardTestCRs, false)
	if err != nil {
		t.Fatal(err)
	}
	var single shardResult
	for _, r := range results {
		if r.way == oneReplica {
			single = r
		}
	}
	if single.cached != shardTestCRs {
		t.Fatalf("the single replica caches %d ShardApps, want %d", single.cached, shardTestCRs)
	}
	for _, r := range results {
		t.Logf("%s, replica %s: %d watch events, %d watch bytes, %d cached", r.way, r.replica, r.watchEvents, r.watchBytes, r.cached)
		if r.passRequests != 0 {
			t.Errorf("%s, replica %s: a converged pass sent %d requests, want 0", r.way, r.replica, r.passRequests)
		}
		switch r.way {
		case serverSide:
			if r.watchEvents >= single.watchEvents {
				t.Errorf("%s, replica %s: %d ShardApp watch events, not fewer than the single replica's %d",
					r.way, r.replica, r.watchEvents, single.watchEvents)
			}
			if r.cached >= single.cached {
				t.Errorf("%s, replica %s caches %d ShardApps, not fewer than the single replica's %d", r.way, r.replica, r.cached, single.cached)
			}
		case clientSide:
			if r.cached != single.cached {
				t.Errorf("%s, replica %s caches %d ShardApps, want all %d", r.way, r.replica, r.cached, single.cached)
			}
		}
	}
}

// shardMarkdown is the report's section on sharding.
func shardMarkdown(results []shardResult) string {
	var b strings.Builder
	b.WriteString("## Sharding: one replica, three with server-side selectors, three filtering on the client\n\n")
	if len(results) == 0 {
		b.WriteString("Not measured.\n\n")
		return b.String()
	}
	single := singleReplica(results)
	fmt.Fprintf(&b, "%d ShardApps (a small custom resource with one ConfigMap child), reconciled by `multicluster.RunOperator`'s\n", results[0].crs)
	b.WriteString("CRReconciler, on a control plane of its own with the ShardedListAndWatch feature gate on. The three ways run one\n")
	b.WriteString("after the other, each in a namespace of its own; the sharded replicas are members of one ring\n")
	fmt.Fprintf(&b, "(`OperatorOptions.Sharded`, Lease duration %s, renewed every %s).\n\n", shardLeaseDuration, shardRenewPeriod)
	b.WriteString("| way | replica | share of the hash space | ShardApp watch events | vs. 1 replica | ShardApp bytes received | ShardApps cached | cache heap of the ShardApps | vs. 1 replica | converge: time | requests / converged pass | takeover of a killed replica |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range results {
		takeover := "—"
		if r.takeover > 0 {
			takeover = dur(r.takeover)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %d | %s | %s | %s | %d | %s |\n",
			r.way, r.replica, percent(r.share), r.watchEvents, ratio(r.watchEvents, single.watchEvents), kib(r.watchBytes+r.listBytes),
			r.cached, kib(r.heap), ratio(r.heap, single.heap), dur(r.convergeTime), r.passRequests, takeover)
	}
	b.WriteString("\nCounted on each replica's rest.Config by a transport wrapper, from the ShardApps' creation (the informers\n")
	b.WriteString("synced and the ring split before it) until every ShardApp was Ready: watch events are the newline-delimited\n")
	b.WriteString("JSON frames of the responses to watch requests of the ShardApp collection (bookmarks included), bytes\n")
	b.WriteString("received those read from the watch and the list responses of that collection. Share of the hash space: the\n")
	b.WriteString("replica's `shard.Member.Active` ranges, as split by `shard.Assign` among the replicas' identities. Cache\n")
	b.WriteString("heap: `runtime.MemStats.HeapAlloc` after two full GCs around a List of the ShardApps from the replica's\n")
	b.WriteString("cache, which copies every cached ShardApp: the heap the cache holds for them (the median of five Lists,\n")
	b.WriteString("since the other replicas run in the same process). Converge: from the first creation until every ShardApp was\n")
	b.WriteString("Ready, the same for every replica of a way. Converged pass: each replica reconciles every ShardApp its\n")
	b.WriteString("cache holds through its controller's reconciler, behind `shard.Gate` when sharded; the ring's Lease\n")
	b.WriteString("renewals are not counted. Takeover: the last replica's requests all fail from then on (its ring\n")
	b.WriteString("client too, so it cannot release its Lease) and its manager is stopped; the time runs until the other\n")
	b.WriteString("replicas' active ranges cover the whole hash space (`shard.Full()`), bounded below by the Lease duration.\n\n")
	return b.String()
}

// shardSummary is the README's short table and paragraph on sharding.
func shardSummary(results []shardResult) string {
	if len(results) == 0 {
		return ""
	}
	single := singleReplica(results)
	var b strings.Builder
	fmt.Fprintf(&b, "\nSharding, %d custom resources, per replica (details in [docs/bench.md](docs/bench.md)):\n\n", results[0].crs)
	b.WriteString("| way | replica | share of the hash space | CR watch events (vs. 1 replica) | CR cache heap (vs. 1 replica) | requests / converged pass | takeover of a killed replica |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range results {
		takeover := "—"
		if r.takeover > 0 {
			takeover = dur(r.takeover)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d (%s) | %s (%s) | %d | %s |\n", r.way, r.replica, percent(r.share),
			r.watchEvents, ratio(r.watchEvents, single.watchEvents), kib(r.heap), ratio(r.heap, single.heap), r.passRequests, takeover)
	}
	b.WriteString("\nWith server-side selectors a replica receives and caches about its share of the custom resources; filtering\n")
	b.WriteString("on the client, every replica receives and caches all of them, as one replica does, and only the passes are split.\n")
	b.WriteString("The shares are `shard.Assign`'s split among the replicas' identities.\n")
	var events, heap, total int
	for _, r := range results {
		if r.way != serverSide {
			continue
		}
		total++
		if float64(r.watchEvents) <= 0.4*float64(single.watchEvents) {
			events++
		}
		if float64(r.heap) <= 0.4*float64(single.heap) {
			heap++
		}
	}
	fmt.Fprintf(&b, "Against the target of at most 40%% of the single replica's, %d of %d server-side replicas stay\n", events, total)
	fmt.Fprintf(&b, "within it for CR watch events and %d of %d for CR cache heap.\n", heap, total)
	return b.String()
}

// singleReplica is the result of the unsharded way.
func singleReplica(results []shardResult) shardResult {
	for _, r := range results {
		if r.way == oneReplica {
			return r
		}
	}
	return shardResult{}
}

// ratio is v as a percentage of of; "n/a" when of is not positive.
func ratio(v, of int64) string {
	if of <= 0 {
		return "n/a"
	}
	return percent(float64(v) / float64(of))
}

func percent(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }

func kib(b int64) string { return fmt.Sprintf("%.1f KiB", float64(b)/1024) }

// cacheHeap is the median, over five Lists of the ShardApps the replica caches in ns, of
// the heap one List's copy of them adds (other replicas run in the same process, so a
// single sample may be off by more than the copy), and how many it caches.
func (r *shardReplica) cacheHeap(ctx context.Context, ns string) (heap int64, cached int, err error) {
	samples := make([]int64, 0, 5)
	for range 5 {
		before := heapAlloc()
		list, err := r.cachedApps(ctx, ns)
		if err != nil {
			return 0, 0, err
		}
		samples = append(samples, heapAlloc()-before)
		cached = len(list.Items)
		runtime.KeepAlive(list)
	}
	slices.Sort(samples)
	return samples[len(samples)/2], cached, nil
}
