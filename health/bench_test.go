package health_test

import (
	"context"
	"testing"

	"github.com/c5c3/reconciler-sdk/health"
)

// BenchmarkFlowCacheHit measures the common path of a converged CR: a passing probe
// reused from the TTL cache (no request).
func BenchmarkFlowCacheHit(b *testing.B) {
	s := newServer(b, status(200, ""))
	opts := health.DefaultOptions()
	opts.Outbound = loopback
	p := health.NewProber(opts)
	ctx := context.Background()
	if _, err := p.Flow(ctx, app, "APIReady", s.URL); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Flow(ctx, app, "APIReady", s.URL); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if s.hits.Load() != 1 {
		b.Fatalf("cache hit path sent %d requests, want only the warm-up", s.hits.Load()-1)
	}
}

// BenchmarkFlowMiss measures a real probe over loopback (cache disabled).
func BenchmarkFlowMiss(b *testing.B) {
	s := newServer(b, status(200, ""))
	opts := health.DefaultOptions()
	opts.Outbound = loopback
	opts.TTL = 0
	p := health.NewProber(opts)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Flow(ctx, app, "APIReady", s.URL); err != nil {
			b.Fatal(err)
		}
	}
}
