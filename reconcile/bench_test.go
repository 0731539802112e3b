package reconcile_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

// noop is the step body the benchmarks measure around: it does nothing, so what is
// left is the runner's overhead.
func noop(context.Context, *Widget) (ctrl.Result, error) { return ctrl.Result{}, nil }

// BenchmarkStep compares calling a step function directly with running it through a
// pipeline, bare and instrumented (duration histogram, error counter, panic recovery).
func BenchmarkStep(b *testing.B) {
	ctx := context.Background()
	w := newWidget(1)
	m := newTestMetrics(b, "bench")

	b.Run("direct", func(b *testing.B) {
		fn := reconcile.StepFunc[*Widget](noop)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := fn(ctx, w); err != nil {
				b.Fatal(err)
			}
		}
	})
	for name, p := range map[string]*reconcile.Pipeline[*Widget]{
		"unnamed":      mustPipeline(b, m, reconcile.Step[*Widget]{Run: noop}),
		"instrumented": mustPipeline(b, m, reconcile.Step[*Widget]{Name: "Config", Condition: "ConfigReady", Run: noop}),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Run(ctx, w); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPipeline runs a Dashboard-sized table: eight instrumented steps and an unnamed
// prune step, per pass.
func BenchmarkPipeline(b *testing.B) {
	ctx := context.Background()
	w := newWidget(1)
	m := newTestMetrics(b, "bench_pipeline")
	var steps []reconcile.Step[*Widget]
	for _, name := range []string{"Secrets", "Config", "Deployment", "", "HTTPRoute", "HealthCheck", "HPA", "VPA", "NetworkPolicy"} {
		cond := ""
		if name != "" {
			cond = name + "Ready"
		}
		steps = append(steps, reconcile.Step[*Widget]{Name: name, Condition: cond, Run: noop})
	}
	p := mustPipeline(b, m, steps...)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Run(ctx, w); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunPassConverged runs a whole pass (read, finalizer check, three steps,
// Ready aggregation, status comparison) on a converged Widget on the test control
// plane, and reports the API requests and writes per pass: one GET, no write.
func BenchmarkRunPassConverged(b *testing.B) {
	ctx := context.Background()
	ns := env.Namespace(b)
	w := &Widget{ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: ns}}
	if err := env.Client.Create(ctx, w); err != nil {
		b.Fatal(err)
	}
	c, counter, err := env.CountingClient()
	if err != nil {
		b.Fatal(err)
	}
	r := newWidgetReconciler(b, c)
	key := client.ObjectKeyFromObject(w)
	if _, err := r.Reconcile(ctx, key); err != nil {
		b.Fatal(err)
	}
	counter.Reset()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Reconcile(ctx, key); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
	b.ReportMetric(float64(counter.Writes())/float64(b.N), "writes/op")
}
