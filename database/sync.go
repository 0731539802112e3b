package database

import (
	"context"
	"errors"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/job"
)

// SyncJob is one Job of [ReconcileSyncJobs].
type SyncJob struct {
	// Job is the desired Job, built from scratch on every pass.
	Job *batchv1.Job
	// RerunKey, when set, is the Job's explicit re-run key ([job.RunJobWithKey]);
	// empty uses the digest of the pod template ([job.RunJob]).
	RerunKey string
}

// ReconcileSyncJobs is the db-sync flow: it runs jobs one after the other through
// [job.RunJob] (or [job.RunJobWithKey]), each controlled by owner, and returns the
// [ConditionType] condition to set (without observedGeneration) and the step's result.
// A Job starts only once the one before it has completed, so schema steps such as
// expand, migrate and contract keep their order.
//
//   - A Job just created, still running, or re-created because its re-run key changed:
//     False with reason [ReasonDBSyncInProgress] and ctrl.Result{RequeueAfter:
//     [PollInterval]}.
//   - A Job that failed permanently with an unchanged re-run key: False with reason
//     [ReasonDBSyncFailed], naming the Job and its failure, and an error wrapping
//     [job.ErrJobFailed] marked terminal (controller-runtime's
//     reconcile.TerminalError): the pass ends, the status is written, and nothing
//     requeues until a watched object changes — running the same Job again would fail
//     again. A changed pod template or re-run key re-runs it.
//   - Every Job completed: True with reason [ReasonDatabaseSynced] and a zero result.
//
// No Job, or a nil Job, is refused with [ErrInvalidParams], and a nil scheme with an
// error wrapping apply.ErrNilScheme, before any API call. API failures and Jobs
// [job.RunJob] refuses — among them a Job of the desired name that owner does not
// control, which is never deleted or re-run — return the zero Condition and the error.
func ReconcileSyncJobs(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	jobs ...SyncJob,
) (metav1.Condition, ctrl.Result, error) {
	if len(jobs) == 0 {
		return metav1.Condition{}, ctrl.Result{}, fmt.Errorf("reconcile db-sync: %w: no sync Jobs given", ErrInvalidParams)
	}
	for i, sj := range jobs {
		if sj.Job == nil {
			return metav1.Condition{}, ctrl.Result{}, fmt.Errorf("reconcile db-sync: %w: sync Job %d is nil", ErrInvalidParams, i)
		}
	}
	if err := apply.CheckScheme(scheme); err != nil {
		return metav1.Condition{}, ctrl.Result{}, fmt.Errorf("reconcile db-sync Job %s: %w", keyOf(jobs[0].Job), err)
	}
	names := make([]string, 0, len(jobs))
	for _, sj := range jobs {
		var done bool
		var err error
		if sj.RerunKey == "" {
			done, err = job.RunJob(ctx, c, scheme, owner, sj.Job)
		} else {
			done, err = job.RunJobWithKey(ctx, c, scheme, owner, sj.Job, sj.RerunKey)
		}
		key := keyOf(sj.Job)
		switch {
		case errors.Is(err, job.ErrJobFailed):
			return metav1.Condition{
					Type: ConditionType, Status: metav1.ConditionFalse, Reason: ReasonDBSyncFailed,
					Message: fmt.Sprintf("db-sync Job %s failed: %s", key, failure(err)),
				}, ctrl.Result{},
				ctrlreconcile.TerminalError(fmt.Errorf("reconcile db-sync: %w", err))
		case err != nil:
			return metav1.Condition{}, ctrl.Result{}, fmt.Errorf("reconcile db-sync: %w", err)
		case !done:
			return metav1.Condition{
				Type: ConditionType, Status: metav1.ConditionFalse, Reason: ReasonDBSyncInProgress,
				Message: fmt.Sprintf("waiting for db-sync Job %s to complete", key),
			}, ctrl.Result{RequeueAfter: PollInterval}, nil
		}
		names = append(names, key)
	}
	noun := "db-sync Job"
	if len(names) > 1 {
		noun += "s"
	}
	return metav1.Condition{
		Type: ConditionType, Status: metav1.ConditionTrue, Reason: ReasonDatabaseSynced,
		Message: fmt.Sprintf("%s %s completed", noun, strings.Join(names, ", ")),
	}, ctrl.Result{}, nil
}

// failure extracts the Job's failure reason and message from RunJob's ErrJobFailed
// error ("run Job ns/name: job failed permanently: <reason>: <message>").
func failure(err error) string {
	msg := err.Error()
	marker := job.ErrJobFailed.Error() + ": "
	if i := strings.Index(msg, marker); i >= 0 {
		return msg[i+len(marker):]
	}
	return msg
}
