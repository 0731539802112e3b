package job_test

import (
	"context"
	"errors"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/job"
)

func desiredCronJob(ns, schedule string) *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "trust-flush", Namespace: ns},
		Spec: batchv1.CronJobSpec{
			Schedule: schedule,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyOnFailure,
					Containers:    []corev1.Container{{Name: "flush", Image: "registry.example/identity:1", Command: []string{"identity-manage", "trust_flush"}}},
				}},
			}},
		},
	}
}

func TestEnsureCronJob(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")

	first := desiredCronJob(ns, "0 * * * *")
	if err := job.EnsureCronJob(ctx, env.Client, env.Scheme, owner, first); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(first); ref == nil || ref.UID != owner.UID {
		t.Fatalf("controller reference = %+v, want owner %s", ref, owner.UID)
	}

	// Converged: apply.EnsureObject's control check (one GET) and one no-op apply (no
	// CronJob controller runs, so nothing else writes).
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	if err := job.EnsureCronJob(ctx, c, env.Scheme, owner, desiredCronJob(ns, "0 * * * *")); err != nil {
		t.Fatal(err)
	}
	counter.Reset()
	again := desiredCronJob(ns, "0 * * * *")
	if err := job.EnsureCronJob(ctx, c, env.Scheme, owner, again); err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != first.ResourceVersion || counter.Total() != 2 || counter.Method("GET") != 1 || counter.Writes() != 1 {
		t.Errorf("converged: rv %s -> %s, %d requests (GET %d, writes %d); want unchanged rv, one GET and one apply",
			first.ResourceVersion, again.ResourceVersion, counter.Total(), counter.Method("GET"), counter.Writes())
	}

	// A changed spec is applied in place.
	changed := desiredCronJob(ns, "*/5 * * * *")
	changed.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = "registry.example/identity:2"
	if err := job.EnsureCronJob(ctx, env.Client, env.Scheme, owner, changed); err != nil {
		t.Fatal(err)
	}
	if changed.UID != first.UID || changed.Spec.Schedule != "*/5 * * * *" ||
		changed.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image != "registry.example/identity:2" {
		t.Errorf("change not applied in place: UID %s (was %s), schedule %q", changed.UID, first.UID, changed.Spec.Schedule)
	}

	if err := job.EnsureCronJob(ctx, env.Client, env.Scheme, owner, nil); !errors.Is(err, apply.ErrNilObject) {
		t.Errorf("nil CronJob: err = %v, want ErrNilObject", err)
	}
	if err := job.EnsureCronJob(ctx, env.Client, env.Scheme, nil, desiredCronJob(ns, "0 * * * *")); !errors.Is(err, apply.ErrNilOwner) {
		t.Errorf("nil owner: err = %v, want ErrNilOwner", err)
	}
}
