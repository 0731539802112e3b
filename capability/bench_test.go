package capability_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/c5c3/reconciler-sdk/capability"
)

// BenchmarkIsKindServed measures probes through a warm dynamic RESTMapper: a served kind
// (answered from the mapper's memory) and a missing kind (re-discovered on every miss),
// reporting discovery requests per probe.
func BenchmarkIsKindServed(b *testing.B) {
	missing := schema.GroupVersionKind{Group: "nothing.example.com", Version: "v1", Kind: "Thing"}
	for name, gvk := range map[string]schema.GroupVersionKind{"served": httpRouteGVK, "missing": missing} {
		b.Run(name, func(b *testing.B) {
			c, counter, err := env.CountingClient()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := capability.IsKindServed(c.RESTMapper(), gvk); err != nil {
				b.Fatal(err)
			}
			counter.Reset()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := capability.IsKindServed(c.RESTMapper(), gvk); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
		})
	}
}

// BenchmarkProbeMissingCached measures a missing kind answered from the Probe's
// negative cache.
func BenchmarkProbeMissingCached(b *testing.B) {
	c, counter, err := env.CountingClient()
	if err != nil {
		b.Fatal(err)
	}
	probe, err := capability.NewProbe(c.RESTMapper(), capability.ProbeOptions{NegativeTTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	missing := schema.GroupVersionKind{Group: "nothing.example.com", Version: "v1", Kind: "Thing"}
	if _, err := probe.IsKindServed(missing); err != nil {
		b.Fatal(err)
	}
	counter.Reset()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := probe.IsKindServed(missing); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
}
