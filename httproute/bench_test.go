package httproute_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/httproute"
)

// BenchmarkFlowConverged measures a pass over an accepted route that is already in
// its desired state: allocations and API requests per pass.
func BenchmarkFlowConverged(b *testing.B) {
	ctx := context.Background()
	ns := env.Namespace(b)
	owner := newOwner(b, env, ns)
	key := routeKey(ns)
	c, counter, err := env.CountingClient()
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := flow(ctx, c, env.Scheme, owner, key, desiredRoute(b, ns)); err != nil {
		b.Fatal(err)
	}
	if err := setAccepted(ctx, env.Client, key, metav1.ConditionTrue, "Accepted", "ok"); err != nil {
		b.Fatal(err)
	}
	counter.Reset()
	b.ReportAllocs()
	for b.Loop() {
		cond, _, err := flow(ctx, c, env.Scheme, owner, key, desiredRoute(b, ns))
		if err != nil || cond.Reason != httproute.ReasonAccepted {
			b.Fatalf("%+v %v", cond, err)
		}
	}
	b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
}

// BenchmarkFlowNotRequired measures a pass with no route wanted and none present.
func BenchmarkFlowNotRequired(b *testing.B) {
	ctx := context.Background()
	ns := env.Namespace(b)
	owner := newOwner(b, env, ns)
	c, counter, err := env.CountingClient()
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := flow(ctx, c, env.Scheme, owner, routeKey(ns), nil); err != nil {
		b.Fatal(err)
	}
	counter.Reset()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := flow(ctx, c, env.Scheme, owner, routeKey(ns), nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
}
