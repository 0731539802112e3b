package katalog

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

// deletion runs onDelete for a custom resource being deleted that carries the finalizer:
// its external calls and objects, then waits for its Jobs to finish, then removes the
// finalizer.
//
// A Job that failed for good ends the wait like a completed one: the finalizer is still
// removed, because a cleanup that cannot succeed must not hold the custom resource
// forever (its owner would have to remove the finalizer by hand). The failure is not
// silent: once the finalizer is removed, a Warning event with reason
// ReasonOnDeleteJobFailed on the custom resource names the Job, and the engine logs it.
func (r *crdReconciler) deletion(ctx context.Context, v *crView, box *OperatorBox) (ctrl.Result, error) {
	cr := v.Unstructured
	if !controllerutil.ContainsFinalizer(cr, Finalizer) {
		return ctrl.Result{}, nil
	}
	var failed []*batchv1.Job
	if box.OnDelete != nil {
		d := newPassData(cr)
		if err := r.readCross(ctx, cr, box, d); err != nil {
			return ctrl.Result{}, err
		}
		want := map[childKey]bool{}
		if err := r.runGroup(ctx, cr, "onDelete", box.OnDelete, true, d, want); err != nil {
			return ctrl.Result{}, err
		}
		for _, name := range sortedWanted(want, "job") {
			job := &batchv1.Job{}
			if err := r.engine.applier.Get(ctx, client.ObjectKey{Namespace: cr.GetNamespace(), Name: name}, job); err != nil {
				if apierrors.IsNotFound(err) { // just created; the cache has not seen it yet
					return ctrl.Result{RequeueAfter: r.engine.opts.DeletionPoll}, nil
				}
				return ctrl.Result{}, fmt.Errorf("get onDelete Job %s/%s: %w", cr.GetNamespace(), name, err)
			}
			if !jobFinished(job) {
				reconcile.MarkFalse(v, reconcile.ConditionReady, ReasonDeleting, "waiting for onDelete Job "+name)
				return ctrl.Result{RequeueAfter: r.engine.opts.DeletionPoll}, nil
			}
			if jobFailed(job) != nil {
				failed = append(failed, job)
			}
		}
	}
	if _, err := reconcile.RemoveFinalizer(ctx, r.engine.applier, cr, Finalizer); err != nil {
		return ctrl.Result{}, fmt.Errorf("remove finalizer of %s %s/%s: %w", cr.GetKind(), cr.GetNamespace(), cr.GetName(), err)
	}
	for _, job := range failed {
		c := jobFailed(job)
		note := fmt.Sprintf("onDelete Job %s/%s failed (%s: %s); the finalizer was removed anyway, so the cleanup it does did not happen",
			job.Namespace, job.Name, c.Reason, c.Message)
		log.FromContext(ctx).Info("onDelete Job failed; finalizer removed anyway", "job", job.Namespace+"/"+job.Name, "reason", c.Reason)
		r.engine.opts.Recorder.Eventf(cr, job, corev1.EventTypeWarning, ReasonOnDeleteJobFailed, "Delete", "%s", note)
	}
	return ctrl.Result{}, nil
}

func sortedWanted(want map[childKey]bool, kind string) []string {
	var out []string
	for k := range want {
		if k.kind == kind {
			out = append(out, k.name)
		}
	}
	return sortedKeys(toSet(out))
}

func toSet(s []string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[x] = true
	}
	return m
}

// jobFinished reports whether the Job completed or failed for good.
func jobFinished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == "True" {
			return true
		}
	}
	return false
}

// jobFailed returns the Failed condition of a Job that failed for good, or nil.
func jobFailed(job *batchv1.Job) *batchv1.JobCondition {
	for i, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}
