package job_test

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// simulated marks j as managed by the kit's status simulator: the real Job controller
// leaves it alone. kwok cannot make a Job fail permanently on demand; this is the
// stand-in for that one case.
func simulated(j *batchv1.Job) *batchv1.Job { return simulate.SimulatedJob(j) }

// markJobFailed writes the status of a Job that exceeded its backoffLimit.
func markJobFailed(t *testing.T, key client.ObjectKey) *batchv1.Job {
	t.Helper()
	j, err := simulate.MarkJobFailed(context.Background(), env.Client, key)
	if err != nil {
		t.Fatal(err)
	}
	return j
}
