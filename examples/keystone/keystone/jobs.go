package keystone

import (
	"errors"

	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/job"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// jobVerdict is what a row that runs a run-once Job (PolicyValidation, Bootstrap)
// writes on its condition for each state of the Job: a reason and a message each.
type jobVerdict struct {
	condition                          string
	failed, running, complete          string // reasons
	failedMsg, runningMsg, completeMsg string
}

// outcome turns the answer of job.RunJob or job.RunJobWithKey into the row's verdict.
// A failed Job (job.ErrJobFailed) sets failed and ends the pass with a terminal error:
// the Job runs again only when its input changes. A running one sets running and
// requeues after reconcile.RetryInterval; a completed one sets complete. Any other
// error is returned as it is, the condition untouched.
func (v jobVerdict) outcome(done bool, err error) (reconcile.Outcome, error) {
	switch {
	case errors.Is(err, job.ErrJobFailed):
		return reconcile.Done(reconcile.FalseCondition(v.condition, v.failed, v.failedMsg)), crreconcile.TerminalError(err)
	case err != nil:
		return reconcile.Outcome{}, err
	case !done:
		return reconcile.Requeue(reconcile.FalseCondition(v.condition, v.running, v.runningMsg), reconcile.RetryInterval), nil
	}
	return reconcile.Done(reconcile.TrueCondition(v.condition, v.complete, v.completeMsg)), nil
}
