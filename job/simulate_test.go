package job_test

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// simulatedBy is the spec.managedBy value of Jobs whose status the tests write
// themselves: the real Job controller skips Jobs managed by someone else, so it does not
// run (or fight over) them. kwok cannot make a Job fail permanently on demand; this is
// the stand-in for that one case.
const simulatedBy = "test.example/job-simulator"

// simulated marks j as managed by the test's status simulator.
func simulated(j *batchv1.Job) *batchv1.Job {
	j.Spec.ManagedBy = new(simulatedBy)
	return j
}

// markJobFailed writes the status the Job controller leaves on a Job that exceeded its
// backoffLimit: FailureTarget, then Failed (the API server requires both, a startTime,
// and no active or terminating pods).
func markJobFailed(t *testing.T, key client.ObjectKey) *batchv1.Job {
	t.Helper()
	ctx := context.Background()
	j := &batchv1.Job{}
	if err := env.Client.Get(ctx, key, j); err != nil {
		t.Fatal(err)
	}
	start := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	j.Status = batchv1.JobStatus{
		StartTime:   &start,
		Failed:      *j.Spec.BackoffLimit + 1,
		Terminating: new(int32(0)),
		Ready:       new(int32(0)),
		Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonBackoffLimitExceeded,
				Message: "Job has reached the specified backoff limit", LastProbeTime: now, LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonBackoffLimitExceeded,
				Message: "Job has reached the specified backoff limit", LastProbeTime: now, LastTransitionTime: now},
		},
	}
	if err := env.Client.Status().Update(ctx, j); err != nil {
		t.Fatalf("simulate failure of Job %s: %v", key, err)
	}
	return j
}
