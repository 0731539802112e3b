package reconcile_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// startManager starts a controller-runtime manager on the test control plane whose cache
// sees only namespace ns, and stops it (waiting for it) when the test ends. transform,
// when set, runs on every object the cache's informers receive.
func startManager(t *testing.T, ns string, transform func(any) (any, error), setup func(manager.Manager) error) manager.Manager {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: new(true)},
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, DefaultTransform: transform},
	})
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	if setup != nil {
		if err := setup(mgr); err != nil {
			t.Fatalf("set up manager: %v", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("manager cache did not sync")
	}
	return mgr
}

// cacheGate holds the first informer event for one object after it is armed, so that a
// manager's cache stays stale — deterministically, not by luck of timing — until the
// test ends (or release is called).
type cacheGate struct {
	mu      sync.Mutex
	key     types.NamespacedName
	armed   bool
	held    bool
	release chan struct{}
	once    sync.Once
}

func newCacheGate() *cacheGate { return &cacheGate{release: make(chan struct{})} }

// transform is the cache's DefaultTransform.
func (g *cacheGate) transform(obj any) (any, error) {
	o, ok := obj.(client.Object)
	if !ok {
		return obj, nil
	}
	g.mu.Lock()
	hold := g.armed && client.ObjectKeyFromObject(o) == g.key
	if hold {
		g.armed, g.held = false, true
	}
	g.mu.Unlock()
	if hold {
		<-g.release
	}
	return obj, nil
}

// arm makes the next event for key wait until release.
func (g *cacheGate) arm(key types.NamespacedName) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.key, g.armed = key, true
}

func (g *cacheGate) open() { g.once.Do(func() { close(g.release) }) }

// waitFor polls until cond holds; the timeout only guards against a hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
