package bench_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// way is one of the three ways of writing the children that the benchmark compares.
type way string

const (
	// naiveSSA: apply.EnsureObject through a plain, uncached client. Every child costs
	// its ownership GET and its apply PATCH on every pass.
	naiveSSA way = "naive SSA"
	// sdkApplier: apply.EnsureObject through apply.NewApplier over a manager's cached
	// client, with the SDK's recommended cache options.
	sdkApplier way = "SDK applier"
	// createOrUpdate: controllerutil.CreateOrUpdate through a manager's cached client
	// with the default cache options.
	createOrUpdate way = "CreateOrUpdate"
)

// ways lists the ways in the order the report shows them.
var ways = []way{naiveSSA, sdkApplier, createOrUpdate}

// slug names a way in benchmark names.
func (w way) slug() string {
	switch w {
	case naiveSSA:
		return "naive-ssa"
	case sdkApplier:
		return "sdk-applier"
	default:
		return "create-or-update"
	}
}

// workers is how many owners a pass reconciles at once, like a controller's
// MaxConcurrentReconciles.
const workers = 4

// operator is one running way: the client it reads and writes through, the counter of
// every request it sends (the manager's informers included) and how to stop it.
type operator struct {
	way     way
	client  client.Client
	counter *testenv.RequestCounter
	stop    func() error
}

// sdkCacheOptions are the manager cache options the SDK recommends to operator
// authors, and the kinds its client reads past the cache.
func sdkCacheOptions() (cache.Options, []client.Object) {
	return apply.CacheOptions(fieldManager), reconcile.UncachedObjects()
}

// startOperator starts way w against the shared control plane. The cached ways get a
// manager of their own whose informers for the owner kind and the eight child kinds
// have synced when it returns.
func startOperator(w way) (*operator, error) {
	counter := &testenv.RequestCounter{}
	if w == naiveSSA {
		c, counter, err := testenv.CountingClient(env.Config, env.Scheme)
		if err != nil {
			return nil, err
		}
		return &operator{way: w, client: c, counter: counter, stop: func() error { return nil }}, nil
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(counter.Wrap)
	opts := ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	}
	var uncached []client.Object
	if w == sdkApplier {
		opts.Cache, uncached = sdkCacheOptions()
		opts.Client = client.Options{Cache: &client.CacheOptions{DisableFor: uncached}}
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stop := func() error {
		cancel()
		return <-done
	}
	// Start the informers a controller that owns the eight kinds would start, except
	// for the kinds its client reads past the cache.
	for _, obj := range append(childObjects(), &BenchApp{}) {
		if slices.ContainsFunc(uncached, func(u client.Object) bool { return fmt.Sprintf("%T", u) == fmt.Sprintf("%T", obj) }) {
			continue
		}
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			return nil, errors.Join(fmt.Errorf("informer for %T: %w", obj, err), stop())
		}
	}
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return nil, errors.Join(errors.New("cache did not sync"), stop())
	}
	c := mgr.GetClient()
	if w == sdkApplier {
		c = apply.NewApplier(c, apply.ApplierOptions{FieldManager: fieldManager, APIReader: mgr.GetAPIReader()})
	}
	return &operator{way: w, client: c, counter: counter, stop: stop}, nil
}

// tally counts what a pass did to the children.
type tally struct {
	// changed: created or configured (SSA), created or updated (CreateOrUpdate).
	changed int
	// unchanged: an apply was sent and changed nothing.
	unchanged int
	// skipped: nothing was sent (the Applier's skip, or CreateOrUpdate finding the
	// cached object equal).
	skipped int
	// retried: CreateOrUpdate acted on a stale cache (AlreadyExists, Conflict); a
	// controller would requeue the owner.
	retried int
}

func (t *tally) add(o tally) {
	t.changed += o.changed
	t.unchanged += o.unchanged
	t.skipped += o.skipped
	t.retried += o.retried
}

// quiet reports whether the pass changed nothing on the server and needs no retry.
func (t tally) quiet() bool { return t.changed == 0 && t.retried == 0 }

// reconcileOwner ensures the eight children of owner the operator's way.
func (o *operator) reconcileOwner(ctx context.Context, owner *BenchApp) (tally, error) {
	var t tally
	if o.way == createOrUpdate {
		for _, child := range desiredChildren(owner) {
			res, err := createOrUpdateChild(ctx, o.client, owner, child)
			switch {
			case apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err):
				t.retried++
			case err != nil:
				return t, fmt.Errorf("%T %s: %w", child, client.ObjectKeyFromObject(child), err)
			case res == controllerutil.OperationResultNone:
				t.skipped++
			default:
				t.changed++
			}
		}
		return t, nil
	}
	ctx, writes := apply.WithWrites(ctx)
	for _, child := range desiredChildren(owner) {
		if err := apply.EnsureObject(ctx, o.client, env.Scheme, owner, child, fieldManager); err != nil {
			return t, err
		}
	}
	for _, w := range writes.All() {
		switch w.Action {
		case apply.ActionSkipped:
			t.skipped++
		case apply.ActionUnchanged:
			t.unchanged++
		default:
			t.changed++
		}
	}
	return t, nil
}

// pass reconciles every owner once, workers at a time.
func (o *operator) pass(ctx context.Context, owners []*BenchApp) (tally, error) {
	var (
		mu     sync.Mutex
		total  tally
		errs   []error
		failed int
		wg     sync.WaitGroup
	)
	next := make(chan *BenchApp)
	for range workers {
		wg.Go(func() {
			for owner := range next {
				t, err := o.reconcileOwner(ctx, owner)
				mu.Lock()
				total.add(t)
				if err != nil {
					failed++
					if len(errs) < 3 {
						errs = append(errs, fmt.Errorf("owner %s: %w", owner.Name, err))
					}
				}
				mu.Unlock()
			}
		})
	}
	for _, owner := range owners {
		next <- owner
	}
	close(next)
	wg.Wait()
	if failed > len(errs) {
		errs = append(errs, fmt.Errorf("and %d more owners failed", failed-len(errs)))
	}
	return total, errors.Join(errs...)
}

// createOwners creates n BenchApps in ns through the admin client (not counted).
func createOwners(ctx context.Context, ns string, n int) ([]*BenchApp, error) {
	owners := make([]*BenchApp, n)
	for i := range owners {
		owners[i] = &BenchApp{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%04d", i), Namespace: ns},
			Spec:       BenchAppSpec{Image: "registry.example/app:1", Replicas: 2},
		}
	}
	return owners, parallel(len(owners), func(i int) error { return env.Client.Create(ctx, owners[i]) })
}

// parallel runs f(0..n-1) on a few goroutines and joins the errors.
func parallel(n int, f func(i int) error) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}
