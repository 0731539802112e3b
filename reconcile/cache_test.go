package reconcile_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// pathRecorder records the request lines a rest.Config sends.
type pathRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (p *pathRecorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		p.mu.Lock()
		p.lines = append(p.lines, req.Method+" "+req.URL.RequestURI())
		p.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

// clusterWide returns the requests that listed or watched resource across all
// namespaces; unselected keeps only those without a label selector.
func (p *pathRecorder) clusterWide(resource string, unselected bool) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, l := range p.lines {
		if !strings.HasPrefix(l, "GET /api/v1/"+resource+"?") && l != "GET /api/v1/"+resource {
			continue
		}
		if unselected && strings.Contains(l, "labelSelector=") {
			continue
		}
		out = append(out, l)
	}
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// managerClient starts a manager on a recorded copy of env.Config with the cache and
// client options and returns its client.
func managerClient(t *testing.T, cacheOpts cache.Options, opts client.Options) (client.Client, *pathRecorder) {
	t.Helper()
	rec := &pathRecorder{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = rec.wrap
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: new(true)},
		Client:                 opts,
		Cache:                  cacheOpts,
	})
	if err != nil {
		t.Fatal(err)
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
		t.Fatal("cache did not sync")
	}
	return mgr.GetClient(), rec
}

func TestRecommendedCacheKeepsSecretsAndPodsOutOfMemory(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: ns}, Data: map[string][]byte{"k": []byte("v")}}
	if err := env.Client.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	read := func(c client.Client) {
		t.Helper()
		// What an operator's pass reads: a Secret by name (its own, or here through the
		// plain client a user's), and the Pods of a namespace.
		_ = c.Get(ctx, client.ObjectKeyFromObject(secret), &corev1.Secret{})
		if err := c.List(ctx, &corev1.PodList{}, client.InNamespace(ns)); err != nil {
			t.Fatalf("list Pods: %v", err)
		}
	}

	// Without the options, the first read of each kind lists all of it across the cluster.
	plain, rec := managerClient(t, cache.Options{}, client.Options{})
	read(plain)
	if len(rec.clusterWide("secrets", false)) == 0 || len(rec.clusterWide("pods", false)) == 0 {
		t.Fatalf("a cached read did not list cluster-wide; requests: %v", rec.lines)
	}

	hygienic, rec := managerClient(t, apply.CacheOptions("test-operator"),
		client.Options{Cache: &client.CacheOptions{DisableFor: reconcile.UncachedObjects()}})
	read(hygienic)
	if got := rec.clusterWide("pods", false); len(got) != 0 {
		t.Errorf("with UncachedObjects the manager still listed or watched all pods: %v", got)
	}
	if got := rec.clusterWide("secrets", true); len(got) != 0 {
		t.Errorf("with apply.CacheOptions the manager listed or watched Secrets without the label selector: %v", got)
	}
	if got := rec.clusterWide("secrets", false); len(got) == 0 {
		t.Errorf("the labelled Secrets were not cached; requests: %v", rec.lines)
	}
}
