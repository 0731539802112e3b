package apply_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/apply"
)

// BenchmarkEnsureObjectConverged measures re-applying a Deployment that already has its
// desired state: allocations per apply and API requests per apply (requests/op).
func BenchmarkEnsureObjectConverged(b *testing.B) {
	ctx := context.Background()
	ns := env.Namespace(b)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := env.Client.Create(ctx, owner); err != nil {
		b.Fatal(err)
	}
	c, counter, err := env.CountingClient()
	if err != nil {
		b.Fatal(err)
	}
	if err := apply.EnsureObject(ctx, c, env.Scheme, owner, desiredDeployment(ns), apply.FieldManager); err != nil {
		b.Fatal(err)
	}
	counter.Reset()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := apply.EnsureObject(ctx, c, env.Scheme, owner, desiredDeployment(ns), apply.FieldManager); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
	b.ReportMetric(float64(counter.Writes())/float64(b.N), "patches/op")
}
