package katalog

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

// deletion runs onDelete for a custom resource being deleted that carries the finalizer:
// its external calls and objects, then waits for its Jobs to finish, then removes the
// finalizer.
func (r *crdReconciler) deletion(ctx context.Context, v *crView, box *OperatorBox) (ctrl.Result, error) {
	cr := v.Unstructured
	if !controllerutil.ContainsFinalizer(cr, Finalizer) {
		return ctrl.Result{}, nil
	}
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
		}
	}
	if _, err := reconcile.RemoveFinalizer(ctx, r.engine.applier, cr, Finalizer); err != nil {
		return ctrl.Result{}, fmt.Errorf("remove finalizer of %s %s/%s: %w", cr.GetKind(), cr.GetNamespace(), cr.GetName(), err)
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
