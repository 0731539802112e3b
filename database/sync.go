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
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// SyncJob is one Job of [SyncJobsFlow].
type SyncJob struct {
	// Job is the desired Job, built from scratch on every pass.
	Job *batchv1.Job
	// RerunKey, when set, is the Job's explicit re-run key ([job.RunJobWithKey]);
	// empty uses the digest of the pod template ([job.RunJob]).
	RerunKey string
}

// SyncJobsFlow is the db-sync flow in the [reconcile.Outcome] shape: it runs jobs in
// order, each controlled by owner, and answers [ReasonDBSyncInProgress] with a requeue
// after [PollInterval] while one runs, [ReasonDatabaseSynced] once all completed, and
// [ReasonDBSyncFailed] with a terminal error wrapping [job.ErrJobFailed] for a Job that
// failed permanently (see "Flows" in the package documentation).
func SyncJobsFlow(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object,
	jobs ...SyncJob) (reconcile.Outcome, error) {
	if len(jobs) == 0 {
		return reconcile.Outcome{}, fmt.Errorf("reconcile db-sync: %w: no sync Jobs given", ErrInvalidParams)
	}
	for i, sj := range jobs {
		if sj.Job == nil {
			return reconcile.Outcome{}, fmt.Errorf("reconcile db-sync: %w: sync Job %d is nil", ErrInvalidParams, i)
		}
	}
	if err := apply.CheckScheme(scheme); err != nil {
		return reconcile.Outcome{}, fmt.Errorf("reconcile db-sync Job %s: %w", keyOf(jobs[0].Job), err)
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
			return reconcile.Done(reconcile.FalseCondition(ConditionType, ReasonDBSyncFailed,
					fmt.Sprintf("db-sync Job %s failed: %s", key, failure(err)))),
				ctrlreconcile.TerminalError(fmt.Errorf("reconcile db-sync: %w", err))
		case err != nil:
			return reconcile.Outcome{}, fmt.Errorf("reconcile db-sync: %w", err)
		case !done:
			return reconcile.Requeue(reconcile.FalseCondition(ConditionType, ReasonDBSyncInProgress,
				fmt.Sprintf("waiting for db-sync Job %s to complete", key)), PollInterval), nil
		}
		names = append(names, key)
	}
	noun := "db-sync Job"
	if len(names) > 1 {
		noun += "s"
	}
	return reconcile.Done(reconcile.TrueCondition(ConditionType, ReasonDatabaseSynced,
		fmt.Sprintf("%s %s completed", noun, strings.Join(names, ", ")))), nil
}

// ReconcileSyncJobs is [SyncJobsFlow] answering (condition, result, error); the
// condition carries no observedGeneration.
func ReconcileSyncJobs(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	jobs ...SyncJob,
) (metav1.Condition, ctrl.Result, error) {
	out, err := SyncJobsFlow(ctx, c, scheme, owner, jobs...)
	return out.Condition, out.Result, err
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
