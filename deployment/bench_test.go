package deployment_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"

	"github.com/c5c3/reconciler-sdk/deployment"
)

// BenchmarkEnsureDeploymentConverged measures a reconcile pass on a converged
// Deployment: allocations and API requests per call (two GETs: its own read and
// apply.EnsureObject's control check; one no-op PATCH).
func BenchmarkEnsureDeploymentConverged(b *testing.B) {
	ctx := context.Background()
	ns := env.Namespace(b)
	owner := newOwner(b, ns, "dashboard")
	c, counter, err := env.CountingClient()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := deployment.EnsureDeployment(ctx, c, env.Scheme, owner, desiredDeployment(ns, "web", new(int32(1)))); err != nil {
		b.Fatal(err)
	}
	counter.Reset()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := deployment.EnsureDeployment(ctx, c, env.Scheme, owner, desiredDeployment(ns, "web", new(int32(1)))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
	b.ReportMetric(float64(counter.Writes())/float64(b.N), "writes/op")
}

// BenchmarkEnsureServiceConverged measures a converged Service: the control check's GET
// and one no-op PATCH.
func BenchmarkEnsureServiceConverged(b *testing.B) {
	ctx := context.Background()
	ns := env.Namespace(b)
	owner := newOwner(b, ns, "dashboard")
	c, counter, err := env.CountingClient()
	if err != nil {
		b.Fatal(err)
	}
	if err := deployment.EnsureService(ctx, c, env.Scheme, owner, desiredService(ns, corev1.ServiceTypeClusterIP)); err != nil {
		b.Fatal(err)
	}
	counter.Reset()
	b.ReportAllocs()
	for b.Loop() {
		if err := deployment.EnsureService(ctx, c, env.Scheme, owner, desiredService(ns, corev1.ServiceTypeClusterIP)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
}

// BenchmarkVPAFlowConverged measures a converged VPA flow with one wanted VPA:
// one LIST, the control check's GET and one no-op PATCH (discovery is cached by the
// client's mapper).
func BenchmarkVPAFlowConverged(b *testing.B) {
	ctx := context.Background()
	ns := env.Namespace(b)
	owner := newOwner(b, ns, "dashboard")
	c, counter, err := env.CountingClient()
	if err != nil {
		b.Fatal(err)
	}
	desired := func() []*vpav1.VerticalPodAutoscaler { return []*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "web")} }
	if _, err := vpaFlow(ctx, c, env.Scheme, owner, desired()); err != nil {
		b.Fatal(err)
	}
	counter.Reset()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := vpaFlow(ctx, c, env.Scheme, owner, desired()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
}
