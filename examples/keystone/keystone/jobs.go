package keystone

import (
	"errors"

	ctrl "sigs.k8s.io/controller-runtime"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
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

// settle turns the answer of job.RunJob or job.RunJobWithKey into the row's verdict. A
// failed Job (job.ErrJobFailed) sets failed and ends the pass with a terminal error:
// the Job runs again only when its input changes. A running one sets running and
// requeues after reconcile.RetryInterval; a completed one sets complete. Any other
// error is returned as it is, the condition untouched.
func (v jobVerdict) settle(k *v1alpha1.Keystone, done bool, err error) (ctrl.Result, error) {
	switch {
	case errors.Is(err, job.ErrJobFailed):
		reconcile.MarkFalse(k, v.condition, v.failed, v.failedMsg)
		return ctrl.Result{}, crreconcile.TerminalError(err)
	case err != nil:
		return ctrl.Result{}, err
	case !done:
		reconcile.MarkFalse(k, v.condition, v.running, v.runningMsg)
		return ctrl.Result{RequeueAfter: reconcile.RetryInterval}, nil
	}
	reconcile.MarkTrue(k, v.condition, v.complete, v.completeMsg)
	return ctrl.Result{}, nil
}
