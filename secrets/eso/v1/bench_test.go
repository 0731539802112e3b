package v1_test

import (
	"context"
	"testing"

	"github.com/c5c3/reconciler-sdk/apply"
)

// BenchmarkEnsureExternalSecretConverged measures re-applying an unchanged
// ExternalSecret built from the mirror types, the SDK's steady-state pass: one PATCH
// that the server answers without a write.
func BenchmarkEnsureExternalSecretConverged(b *testing.B) {
	ctx := context.Background()
	ns := env.Namespace(b)
	owner := newOwner(b, ns)
	c, counter, err := env.CountingClient()
	if err != nil {
		b.Fatal(err)
	}
	first := fullExternalSecret(ns, "bench")
	if err := apply.EnsureObject(ctx, c, env.Scheme, owner, first, apply.FieldManager); err != nil {
		b.Fatal(err)
	}
	rv := first.ResourceVersion
	counter.Reset()
	b.ReportAllocs()
	for b.Loop() {
		es := fullExternalSecret(ns, "bench")
		if err := apply.EnsureObject(ctx, c, env.Scheme, owner, es, apply.FieldManager); err != nil {
			b.Fatal(err)
		}
		if es.ResourceVersion != rv {
			b.Fatalf("converged apply wrote: resourceVersion %s -> %s", rv, es.ResourceVersion)
		}
	}
	b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
}

// BenchmarkDeepCopyExternalSecret measures the generated deepcopy of a fully populated
// ExternalSecret.
func BenchmarkDeepCopyExternalSecret(b *testing.B) {
	es := fullExternalSecret("ns", "bench")
	es.Status = fullExternalSecretStatus("target")
	b.ReportAllocs()
	for b.Loop() {
		_ = es.DeepCopy()
	}
}
