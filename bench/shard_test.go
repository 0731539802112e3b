package bench_test

import (
	"bytes"
	"context"
	"encoding/binary"
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

// collectionTraffic is what the API server sent for one collection: the events
// (newline-delimited JSON frames) and bytes of its watches, and the bytes of its lists.
type collectionTraffic struct {
	watchEvents, watchBytes, listBytes atomic.Int64
}

func (c *collectionTraffic) reset() {
	c.watchEvents.Store(0)
	c.watchBytes.Store(0)
	c.listBytes.Store(0)
}

// count wraps the body of resp, the answer to a GET of the collection, so that c counts
// what is read from it.
func (c *collectionTraffic) count(req *http.Request, resp *http.Response) {
	q := req.URL.Query()
	if q.Get("watch") == "true" || q.Get("watch") == "1" {
		resp.Body = &countingBody{ReadCloser: resp.Body, bytes: &c.watchBytes, frames: &c.watchEvents,
			lengthPrefixed: strings.HasPrefix(resp.Header.Get("Content-Type"), "application/vnd.kubernetes.protobuf")}
		return
	}
	resp.Body = &countingBody{ReadCloser: resp.Body, bytes: &c.listBytes}
}

// crTraffic counts, on one replica's rest.Config, what the API server sent it for the
// ShardApp collection and for the ConfigMap collection (the ShardApps' children), and
// every request but the ring's Lease traffic. Once cut, it fails every request, as if
// the replica lost the network.
type crTraffic struct {
	crs      collectionTraffic // ShardApps
	children collectionTraffic // ConfigMaps
	requests atomic.Int64      // requests other than coordination.k8s.io (the ring's Leases)
	cut      atomic.Bool
}

// reset zeroes the counts.
func (c *crTraffic) reset() {
	c.crs.reset()
	c.children.reset()
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
		if err != nil || req.Method != http.MethodGet {
			return resp, err
		}
		switch collectionOf(req.URL.Path) {
		case benchAppGV.Group + "/" + shardAppsResource:
			c.crs.count(req, resp)
		case "/configmaps":
			c.children.count(req, resp)
		}
		return resp, nil
	})
}

// collectionOf is "group/resource" of a collection path (/api/v1/[namespaces/NS/]R or
// /apis/G/V/[namespaces/NS/]R; the core group is empty); "" for any other path.
func collectionOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		group, parts = parts[1], parts[3:]
	default:
		return ""
	}
	switch {
	case len(parts) == 1:
		return group + "/" + parts[0]
	case len(parts) == 3 && parts[0] == "namespaces":
		return group + "/" + parts[2]
	}
	return ""
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// countingBody counts the bytes read from a response body and, when frames is set, the
// events of a watch stream among them: the newlines of a JSON stream or, when
// lengthPrefixed, the frames of a protobuf stream (each a 4-byte big-endian length, then
// that many bytes), as client-go asks for the built-in kinds.
type countingBody struct {
	io.ReadCloser
	bytes, frames  *atomic.Int64
	lengthPrefixed bool
	header         []byte // of the protobuf frame being read, until it has 4 bytes
	rest           uint32 // bytes of the current protobuf frame's message still to read
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.bytes.Add(int64(n))
	switch {
	case b.frames == nil:
	case !b.lengthPrefixed:
		b.frames.Add(int64(bytes.Count(p[:n], []byte{'\n'})))
	default:
		b.frames.Add(int64(b.protobufFrames(p[:n])))
	}
	return n, err
}

// protobufFrames is how many protobuf frames start in data, which continues what was
// read before.
func (b *countingBody) protobufFrames(data []byte) int {
	frames := 0
	for len(data) > 0 {
		if b.rest > 0 {
			skip := min(uint32(len(data)), b.rest)
			data, b.rest = data[skip:], b.rest-skip
			continue
		}
		take := min(4-len(b.header), len(data))
		b.header, data = append(b.header, data[:take]...), data[take:]
		if len(b.header) == 4 {
			frames++
			b.rest, b.header = binary.BigEndian.Uint32(b.header), b.header[:0]
		}
	}
	return frames
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
	// The same for the children (the ConfigMaps): their watch events, the bytes of their
	// watches and lists, how many the replica's cache held and the heap it holds for them.
	childWatchEvents, childWatchBytes, childListBytes int64
	childrenCached                                    int
	childrenHeap                                      int64
	// convergeTime runs from the first ShardApp's creation until every one was Ready;
	// the same for every replica of a way.
	convergeTime time.Duration
	// convergeRequests is the requests the replica sent over convergeTime (the ring's
	// Lease traffic aside).
	convergeRequests int64
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
	// A List of every ShardApp costs the API server CPU in proportion to n, which the
	// replicas then lack: poll at most about every n/2 milliseconds (1.5 s at 3,000).
	if err := wait.PollUntilContextTimeout(ctx, readyPoll(n), settleTimeout, true, func(ctx context.Context) (bool, error) {
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
	// The last children's watch events may still be on their way: measure the caches
	// once every child is in one replica's cache at least.
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, settleTimeout, true, func(ctx context.Context) (bool, error) {
		held := map[string]bool{}
		for _, r := range replicas {
			list := &corev1.ConfigMapList{}
			if err := r.mgr.GetLocalManager().GetCache().List(ctx, list, client.InNamespace(ns)); err != nil {
				return false, err
			}
			for i := range list.Items {
				held[list.Items[i].Name] = true
			}
		}
		return len(held) >= n, nil
	}); err != nil {
		return nil, fmt.Errorf("%s: the children never all reached the replicas' caches: %w", w, err)
	}

	out := make([]shardResult, len(replicas))
	for i, r := range replicas {
		crs, children := &r.traffic.crs, &r.traffic.children
		res := shardResult{way: w, replica: r.name, crs: n, convergeTime: convergeTime, share: 1,
			watchEvents: crs.watchEvents.Load(), watchBytes: crs.watchBytes.Load(), listBytes: crs.listBytes.Load(),
			childWatchEvents: children.watchEvents.Load(), childWatchBytes: children.watchBytes.Load(),
			childListBytes: children.listBytes.Load(), convergeRequests: r.traffic.requests.Load()}
		var err error
		if res.heap, res.cached, err = r.cacheHeap(ctx, ns, func() client.ObjectList { return &ShardAppList{} }); err != nil {
			return nil, err
		}
		if res.childrenHeap, res.childrenCached, err = r.cacheHeap(ctx, ns, func() client.ObjectList { return &corev1.ConfigMapList{} }); err != nil {
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
		tb.Logf("sharding, %s: %d ShardApps Ready in %s", w, n, dur(rs[0].convergeTime))
		out = append(out, rs...)
	}
	return out, nil
}

// shardTestCRs is the size of the workload in TestShardedReplicasReceiveTheirSlice:
// BENCH_SHARD_CRS when set (to run the comparison at a size by hand), 30 otherwise, which
// keeps the test within a CI budget.
func shardTestCRs() int { return envInts("BENCH_SHARD_CRS", []int{30})[0] }

// TestShardedReplicasReceiveTheirSlice: over the same ShardApps, each of three replicas
// sharded with server-side selectors receives fewer ShardApp watch events and ConfigMap
// (child) watch events than a single replica and caches fewer ShardApps and ConfigMaps,
// their caches holding each ConfigMap exactly once between them; with client-side
// filtering (no selectors) each caches every ShardApp and every ConfigMap, as the single
// replica does; and a converged pass sends no request in any way. With -v it logs the
// report's sharding section.
func TestShardedReplicasReceiveTheirSlice(t *testing.T) {
	n := shardTestCRs()
	results, err := measureSharding(context.Background(), t, n, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + shardMarkdown(results))
	single := singleReplica(results)
	if single.cached != n || single.childrenCached != n {
		t.Fatalf("the single replica caches %d ShardApps and %d ConfigMaps, want %d of each", single.cached, single.childrenCached, n)
	}
	children := map[shardWay]int{}
	for _, r := range results {
		if r.passRequests != 0 {
			t.Errorf("%s, replica %s: a converged pass sent %d requests, want 0", r.way, r.replica, r.passRequests)
		}
		if r.way == oneReplica {
			continue
		}
		switch r.way {
		case serverSide:
			children[r.way] += r.childrenCached
			if r.childrenCached >= single.childrenCached || r.childWatchEvents >= single.childWatchEvents {
				t.Errorf("%s, replica %s caches %d ConfigMaps and received %d of their watch events, not fewer than the single replica's %d and %d",
					r.way, r.replica, r.childrenCached, r.childWatchEvents, single.childrenCached, single.childWatchEvents)
			}
			if r.watchEvents >= single.watchEvents {
				t.Errorf("%s, replica %s: %d ShardApp watch events, not fewer than the single replica's %d",
					r.way, r.replica, r.watchEvents, single.watchEvents)
			}
			if r.cached >= single.cached {
				t.Errorf("%s, replica %s caches %d ShardApps, not fewer than the single replica's %d", r.way, r.replica, r.cached, single.cached)
			}
		case clientSide:
			if r.cached != single.cached || r.childrenCached != single.childrenCached {
				t.Errorf("%s, replica %s caches %d ShardApps and %d ConfigMaps, want all %d of each",
					r.way, r.replica, r.cached, r.childrenCached, n)
			}
		}
	}
	if children[serverSide] != n {
		t.Errorf("%s: the replicas cache %d ConfigMaps between them, want each of the %d once", serverSide, children[serverSide], n)
	}
}

// A protobuf watch stream's events are counted by their length-prefixed frames, however
// the reads split them, and a JSON stream's by its newlines.
func TestCountingBodyCountsWatchFrames(t *testing.T) {
	var stream []byte
	for _, size := range []int{0, 1, 10, 300, 4, 70000} {
		stream = binary.BigEndian.AppendUint32(stream, uint32(size))
		stream = append(stream, bytes.Repeat([]byte{'\n'}, size)...) // newlines must not count
	}
	for _, chunk := range []int{1, 3, 4, 5, 4096, len(stream)} {
		var n, frames atomic.Int64
		b := &countingBody{ReadCloser: io.NopCloser(&chunkReader{data: stream, chunk: chunk}), bytes: &n, frames: &frames, lengthPrefixed: true}
		if _, err := io.Copy(io.Discard, b); err != nil {
			t.Fatal(err)
		}
		if frames.Load() != 6 || n.Load() != int64(len(stream)) {
			t.Errorf("reads of %d bytes: %d frames of %d bytes, want 6 of %d", chunk, frames.Load(), n.Load(), len(stream))
		}
	}
	var n, frames atomic.Int64
	b := &countingBody{ReadCloser: io.NopCloser(strings.NewReader("{\"type\":\"ADDED\"}\n{\"type\":\"BOOKMARK\"}\n")), bytes: &n, frames: &frames}
	if _, err := io.Copy(io.Discard, b); err != nil {
		t.Fatal(err)
	}
	if frames.Load() != 2 {
		t.Errorf("a JSON stream of two events: %d frames, want 2", frames.Load())
	}
}

// chunkReader reads data at most chunk bytes at a time.
type chunkReader struct {
	data  []byte
	chunk int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.chunk)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// shardColumn is one column of the sharding tables: its heading and its cell of a
// replica's result, given the single replica's.
type shardColumn struct {
	heading string
	right   bool // numbers: right-aligned
	cell    func(r, single shardResult) string
}

// The columns of the sharding tables.
var (
	colWay     = shardColumn{"way", false, func(r, _ shardResult) string { return string(r.way) }}
	colReplica = shardColumn{"replica", false, func(r, _ shardResult) string { return r.replica }}
	colShare   = shardColumn{"share of the hash space", true, func(r, _ shardResult) string { return percent(r.share) }}
	colPass    = shardColumn{"requests / converged pass", true, func(r, _ shardResult) string { return fmt.Sprint(r.passRequests) }}
	colTake    = shardColumn{"takeover of a killed replica", true, func(r, _ shardResult) string {
		if r.takeover > 0 {
			return dur(r.takeover)
		}
		return "—"
	}}
)

// shardTable renders results as a markdown table of cols.
func shardTable(results []shardResult, cols ...shardColumn) string {
	single := singleReplica(results)
	var b strings.Builder
	for _, c := range cols {
		b.WriteString("| " + c.heading + " ")
	}
	b.WriteString("|\n")
	for _, c := range cols {
		if c.right {
			b.WriteString("| ---: ")
		} else {
			b.WriteString("| --- ")
		}
	}
	b.WriteString("|\n")
	for _, r := range results {
		for _, c := range cols {
			b.WriteString("| " + c.cell(r, single) + " ")
		}
		b.WriteString("|\n")
	}
	return b.String()
}

// versus is v with its ratio to of: "1234 (37%)".
func versus(v, of int64, format func(int64) string) string {
	return format(v) + " (" + ratio(v, of) + ")"
}

func count(v int64) string { return fmt.Sprint(v) }

// shardMarkdown is the report's section on sharding.
func shardMarkdown(results []shardResult) string {
	var b strings.Builder
	b.WriteString("## Sharding: one replica, three with server-side selectors, three filtering on the client\n\n")
	if len(results) == 0 {
		b.WriteString("Not measured.\n\n")
		return b.String()
	}
	fmt.Fprintf(&b, "%d ShardApps (a small custom resource with one ConfigMap child), reconciled by `multicluster.RunOperator`'s\n", results[0].crs)
	b.WriteString("CRReconciler, on a control plane of its own with the ShardedListAndWatch feature gate on. The three ways run one\n")
	b.WriteString("after the other, each in a namespace of its own; the sharded replicas are members of one ring\n")
	fmt.Fprintf(&b, "(`OperatorOptions.Sharded`, Lease duration %s, renewed every %s).\n\n", shardLeaseDuration, shardRenewPeriod)
	b.WriteString(shardTable(results, colWay, colReplica, colShare,
		shardColumn{"ShardApp watch events (vs. 1 replica)", true, func(r, s shardResult) string { return versus(r.watchEvents, s.watchEvents, count) }},
		shardColumn{"ShardApp bytes received", true, func(r, _ shardResult) string { return kib(r.watchBytes + r.listBytes) }},
		shardColumn{"ShardApps cached", true, func(r, _ shardResult) string { return fmt.Sprint(r.cached) }},
		shardColumn{"cache heap of the ShardApps (vs. 1 replica)", true, func(r, s shardResult) string { return versus(r.heap, s.heap, kib) }},
		shardColumn{"ConfigMap watch events (vs. 1 replica)", true, func(r, s shardResult) string {
			return versus(r.childWatchEvents, s.childWatchEvents, count)
		}},
		shardColumn{"ConfigMap bytes received", true, func(r, _ shardResult) string { return kib(r.childWatchBytes + r.childListBytes) }},
		shardColumn{"ConfigMaps cached", true, func(r, _ shardResult) string { return fmt.Sprint(r.childrenCached) }},
		shardColumn{"cache heap of the ConfigMaps (vs. 1 replica)", true, func(r, s shardResult) string {
			return versus(r.childrenHeap, s.childrenHeap, kib)
		}},
		shardColumn{"operator cache heap, children included (vs. 1 replica)", true, func(r, s shardResult) string {
			return versus(r.operatorHeap(), s.operatorHeap(), kib)
		}},
		shardColumn{"converge: time", true, func(r, _ shardResult) string { return dur(r.convergeTime) }},
		shardColumn{"converge: requests", true, func(r, _ shardResult) string { return fmt.Sprint(r.convergeRequests) }},
		colPass, colTake))
	b.WriteString("\nChildren out of the other replicas' caches: a sharded replica's Applier labels every child it writes with\n")
	b.WriteString("its owner's bucket (`shard.LabelBucket`, the leading `shard.BucketBits` bits of the hash of the owner's UID,\n")
	b.WriteString("through `apply.ApplierOptions.OwnerLabels` = `shard.OwnerLabels`); the ring cuts the hash space only between\n")
	b.WriteString("buckets, so each replica's ranges are whole buckets; and the lists and watches of the children informers\n")
	b.WriteString("carry a label selector of the replica's buckets (`shard.Member.SelectOwned`, which the CRReconciler calls for\n")
	b.WriteString("its owned kinds). That is a plain label selector, which every API server serves; the replica's transport\n")
	b.WriteString("adds it with `OperatorOptions.ShardSelectors` (here the server-side way), next to the shardSelector of the\n")
	b.WriteString("custom resources where the server serves it. The client-side way runs without ShardSelectors: its\n")
	b.WriteString("informers select nothing, so every replica caches every custom resource and every child.\n\n")
	b.WriteString(shardTargets(results))
	b.WriteString("\nCounted on each replica's rest.Config by a transport wrapper, from the ShardApps' creation (the informers\n")
	b.WriteString("synced and the ring split before it) until every ShardApp was Ready: watch events are the frames of the\n")
	b.WriteString("responses to watch requests of the collection, newline-delimited JSON for the ShardApps and length-prefixed\n")
	b.WriteString("protobuf for the ConfigMaps (client-go asks for protobuf for built-in kinds), bookmarks included; bytes\n")
	b.WriteString("received are those read from the watch and the list responses of that collection. Share of the\n")
	b.WriteString("hash space: the replica's `shard.Member.Active` ranges, as split by `shard.Assign` among the replicas'\n")
	b.WriteString("identities. Cache heap: `runtime.MemStats.HeapAlloc` after two full GCs around a List of the kind from the\n")
	b.WriteString("replica's cache, which copies every cached object: the heap the cache holds for them (the median of five\n")
	b.WriteString("Lists, since the other replicas run in the same process), once every ShardApp was Ready and every child\n")
	b.WriteString("had reached a replica's cache. Operator cache heap: the ShardApps' median plus the ConfigMaps' median, the\n")
	b.WriteString("heap the replica's caches hold for its workload (its other informers, of the ring's Leases and the\n")
	b.WriteString("clusters' registrations, hold next to nothing here). Converge: from the first creation until every ShardApp was\n")
	b.WriteString("Ready (polled by a List of them every n/2 ms, 50 ms at least), the same for every replica of a way, and the\n")
	b.WriteString("requests the replica sent meanwhile; each replica runs one worker (the default MaxConcurrentReconciles).\n")
	b.WriteString("Converged pass: each replica reconciles every ShardApp its\n")
	b.WriteString("cache holds through its controller's reconciler, behind `shard.Gate` when sharded; the ring's Lease\n")
	b.WriteString("renewals are not counted. Takeover: the last replica's requests all fail from then on (its ring\n")
	b.WriteString("client too, so it cannot release its Lease) and its manager is stopped; the time runs until the other\n")
	b.WriteString("replicas' active ranges cover the whole hash space (`shard.Full()`), bounded below by the Lease duration.\n\n")
	return b.String()
}

// shardTargets states the targets of the server-side way and how many of its replicas
// meet them, and what the client-side way does not save.
func shardTargets(results []shardResult) string {
	single := singleReplica(results)
	within := func(v, of int64) bool { return of > 0 && float64(v) <= 0.4*float64(of) }
	var events, heap, total int
	for _, r := range results {
		if r.way != serverSide {
			continue
		}
		total++
		if within(r.watchEvents, single.watchEvents) {
			events++
		}
		if within(r.heap, single.heap) {
			heap++
		}
	}
	var b strings.Builder
	b.WriteString("Targets: each of the 3 server-side replicas receives at most 40% of the single replica's CR watch events and\n")
	fmt.Fprintf(&b, "holds at most 40%% of its CR cache heap. Met by %d of %d server-side replicas for CR watch events and %d of %d\n", events, total, heap, total)
	b.WriteString("for CR cache heap. Filtering on the client saves none of that: every client-side replica receives and caches\n")
	b.WriteString("every custom resource and every child, as the single replica does; only the passes are split.\n")
	return b.String()
}

// shardSummary is the README's short table and paragraph on sharding.
func shardSummary(results []shardResult) string {
	if len(results) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nSharding, %d custom resources with one child each, per replica (details in [docs/bench.md](docs/bench.md)):\n\n", results[0].crs)
	b.WriteString(shardTable(results, colWay, colReplica, colShare,
		shardColumn{"CR watch events (vs. 1 replica)", true, func(r, s shardResult) string { return versus(r.watchEvents, s.watchEvents, count) }},
		shardColumn{"CR cache heap (vs. 1 replica)", true, func(r, s shardResult) string { return versus(r.heap, s.heap, kib) }},
		shardColumn{"operator cache heap, children included (vs. 1 replica)", true, func(r, s shardResult) string {
			return versus(r.operatorHeap(), s.operatorHeap(), kib)
		}},
		colPass, colTake))
	b.WriteString("\nWith server-side selectors a replica receives and caches about its share of the custom resources; filtering\n")
	b.WriteString("on the client, every replica receives and caches all of them, as one replica does. With the selectors a\n")
	b.WriteString("replica also caches only the children of its share: the Applier labels each child with its owner's bucket\n")
	b.WriteString("and the children informers select the replica's buckets. The shares are `shard.Assign`'s split among the\n")
	b.WriteString("replicas' identities.\n\n")
	b.WriteString(shardTargets(results))
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

// readyPoll is how often the comparison lists the n ShardApps to see whether all are
// Ready: every 50 ms for few, less often as they grow.
func readyPoll(n int) time.Duration {
	return max(50*time.Millisecond, time.Duration(n)*time.Millisecond/2)
}

// operatorHeap is the heap the replica's cache holds for the ShardApps and their
// children together: the sum of the two medians.
func (r shardResult) operatorHeap() int64 { return r.heap + r.childrenHeap }

// cacheHeap is the median, over five Lists from the replica's cache of the objects of
// newList's kind in ns, of the heap one List's copy of them adds (other replicas run in
// the same process, so a single sample may be off by more than the copy), and how many
// the cache holds.
func (r *shardReplica) cacheHeap(ctx context.Context, ns string, newList func() client.ObjectList) (heap int64, cached int, err error) {
	samples := make([]int64, 0, 5)
	for range 5 {
		list := newList()
		before := heapAlloc()
		if err := r.mgr.GetLocalManager().GetCache().List(ctx, list, client.InNamespace(ns)); err != nil {
			return 0, 0, fmt.Errorf("replica %s: list %T from its cache: %w", r.name, list, err)
		}
		samples = append(samples, heapAlloc()-before)
		cached = apimeta.LenList(list)
		runtime.KeepAlive(list)
	}
	slices.Sort(samples)
	return samples[len(samples)/2], cached, nil
}
