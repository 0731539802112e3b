package database_test

import (
	"context"
	"testing"

	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// BenchmarkEnsureDatabaseConverged measures re-applying a Database that already has its
// desired state: allocations and API requests per call (requests/op, patches/op).
func BenchmarkEnsureDatabaseConverged(b *testing.B) {
	ctx := context.Background()
	ns := env.Namespace(b)
	owner := newOwner(b, ns)
	c, counter, err := env.CountingClient()
	if err != nil {
		b.Fatal(err)
	}
	db := desiredDatabase(ns)
	if _, err := database.EnsureDatabase(ctx, c, env.Scheme, owner, db); err != nil {
		b.Fatal(err)
	}
	if _, err := simulate.MarkDatabaseReady(ctx, env.Client, key(db)); err != nil {
		b.Fatal(err)
	}
	counter.Reset()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ready, err := database.EnsureDatabase(ctx, c, env.Scheme, owner, desiredDatabase(ns))
		if err != nil || !ready {
			b.Fatalf("ready=%v err=%v", ready, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
	b.ReportMetric(float64(counter.Writes())/float64(b.N), "patches/op")
}

// BenchmarkReconcileProvisionConverged measures a provisioning pass over a database
// that is already provisioned: allocations and API requests per pass.
func BenchmarkReconcileProvisionConverged(b *testing.B) {
	ctx := context.Background()
	ns := env.Namespace(b)
	owner := newOwner(b, ns)
	need(b)(simulate.MarkMariaDBReady(ctx, env.Client, newMariaDB(b, ns)))
	settle(ctx, b, owner, true)
	need(b)(simulate.MarkDatabaseReady(ctx, env.Client, objectKey(ns, "identity")))
	settle(ctx, b, owner, true)
	need(b)(simulate.MarkUserReady(ctx, env.Client, objectKey(ns, "identity")))
	need(b)(simulate.MarkGrantReady(ctx, env.Client, objectKey(ns, "identity")))

	c, counter, err := env.CountingClient()
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := provision(ctx, b, c, owner, true); err != nil {
		b.Fatal(err)
	}
	counter.Reset()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		cond, _, err := provision(ctx, b, c, owner, true)
		if err != nil || cond.Reason != database.ReasonDatabaseProvisioned {
			b.Fatalf("cond=%+v err=%v", cond, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
	b.ReportMetric(float64(counter.Writes())/float64(b.N), "patches/op")
}
