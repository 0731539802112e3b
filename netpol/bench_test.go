package netpol_test

import (
	"context"
	"testing"
)

// BenchmarkFlowConverged measures a pass over a policy already in its desired
// state: allocations and API requests per pass.
func BenchmarkFlowConverged(b *testing.B) {
	ctx := context.Background()
	ns := env.Namespace(b)
	owner := newOwner(b, ns)
	c, counter, err := env.CountingClient()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := flowCond(b, ctx, c, env.Scheme, owner, policyKey(ns), desiredPolicy(ns, "gateways")); err != nil {
		b.Fatal(err)
	}
	counter.Reset()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := flowCond(b, ctx, c, env.Scheme, owner, policyKey(ns), desiredPolicy(ns, "gateways")); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
}
