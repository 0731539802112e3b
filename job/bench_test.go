package job_test

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/c5c3/reconciler-sdk/job"
)

// BenchmarkRunJobCompleted measures a reconcile pass on a completed Job: one GET, no
// write, plus hashing the pod template.
func BenchmarkRunJobCompleted(b *testing.B) {
	ctx := context.Background()
	ns := env.Namespace(b)
	owner := newOwner(b, ns, "identity")
	build := func() *batchv1.Job { return desiredJob(ns, "registry.example/identity:1") }
	eventually(b, "the Job to complete", func(ctx context.Context) (bool, string, error) {
		done, err := job.RunJob(ctx, env.Client, env.Scheme, owner, build())
		return done, "", err
	})
	c, counter, err := env.CountingClient()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := job.RunJob(ctx, c, env.Scheme, owner, build()); err != nil {
		b.Fatal(err)
	}
	counter.Reset()
	b.ReportAllocs()
	for b.Loop() {
		done, err := job.RunJob(ctx, c, env.Scheme, owner, build())
		if err != nil || !done {
			b.Fatalf("done=%v err=%v", done, err)
		}
	}
	b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
	b.ReportMetric(float64(counter.Writes())/float64(b.N), "writes/op")
}

// BenchmarkPodTemplateHash measures the re-run key computation alone.
func BenchmarkPodTemplateHash(b *testing.B) {
	tpl := desiredJob("ns", "registry.example/identity:1").Spec.Template
	b.ReportAllocs()
	for b.Loop() {
		if _, err := job.PodTemplateHash(&tpl); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnsureCronJobConverged measures a converged CronJob: the control check's GET
// and one no-op PATCH.
func BenchmarkEnsureCronJobConverged(b *testing.B) {
	ctx := context.Background()
	ns := env.Namespace(b)
	owner := newOwner(b, ns, "identity")
	c, counter, err := env.CountingClient()
	if err != nil {
		b.Fatal(err)
	}
	if err := job.EnsureCronJob(ctx, c, env.Scheme, owner, desiredCronJob(ns, "0 * * * *")); err != nil {
		b.Fatal(err)
	}
	counter.Reset()
	b.ReportAllocs()
	for b.Loop() {
		if err := job.EnsureCronJob(ctx, c, env.Scheme, owner, desiredCronJob(ns, "0 * * * *")); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
}
