package katalog

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

// onDeleteGroup is the name of the onDelete resource group, in paths and errors.
const onDeleteGroup = "onDelete"

// deletion runs onDelete for a custom resource being deleted that carries the finalizer:
// its external calls and objects, then waits for its Jobs to finish, then removes the
// finalizer.
//
// A Job that failed for good ends the wait like a completed one: the finalizer is still
// removed, because a cleanup that cannot succeed must not hold the custom resource
// forever (its owner would have to remove the finalizer by hand). The failure is not
// silent: once the finalizer is removed, a Warning event with reason
// ReasonOnDeleteJobFailed on the custom resource names the Job, and the engine logs it.
//
// For the same reason onDelete is bounded in time: while it is not done (a step fails, a
// Job runs) before OnDeleteGiveUpAfter has passed since the deletionTimestamp, the pass
// fails or requeues and Ready says when onDelete gives up; the first pass after that
// gives up (abandon). Only a Job that carries OnDeleteJobAnnotation with the custom
// resource's UID counts as the onDelete Job; another Job of its name is an error
// wrapping ErrOnDeleteJobConflict.
func (r *crdReconciler) deletion(ctx context.Context, v *crView, box *OperatorBox) (ctrl.Result, error) {
	cr := v.Unstructured
	if !controllerutil.ContainsFinalizer(cr, Finalizer) {
		return ctrl.Result{}, nil
	}
	var failed []*batchv1.Job
	if box.OnDelete != nil {
		waiting, jobs, err := r.runOnDelete(ctx, cr, box)
		giveUpAt := r.giveUpAt(cr)
		switch {
		case err != nil && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
			return ctrl.Result{}, r.skip(ctx, v)
		case (err != nil || waiting != "") && !time.Now().Before(giveUpAt):
			why := waiting
			if err != nil {
				why = err.Error()
			}
			return ctrl.Result{}, r.abandon(ctx, v, why)
		case err != nil:
			return ctrl.Result{}, fmt.Errorf("%w (onDelete gives up at %s)", err, giveUpAt.UTC().Format(time.RFC3339))
		case waiting != "":
			reconcile.MarkFalse(v, reconcile.ConditionReady, ReasonDeleting,
				fmt.Sprintf("%s; onDelete gives up at %s", waiting, giveUpAt.UTC().Format(time.RFC3339)))
			return ctrl.Result{RequeueAfter: min(r.engine.opts.DeletionPoll, max(time.Until(giveUpAt), time.Second))}, nil
		}
		failed = jobs
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

// runOnDelete makes onDelete's calls, writes its objects and looks at its Jobs. It
// returns what the deletion still waits for ("" when every Job finished), the Jobs
// that failed for good, or the error that stopped it.
func (r *crdReconciler) runOnDelete(ctx context.Context, cr *unstructured.Unstructured, box *OperatorBox) (string, []*batchv1.Job, error) {
	d := newPassData(cr)
	if err := r.readCross(ctx, cr, box, d); err != nil {
		return "", nil, err
	}
	want := map[childKey]bool{}
	if err := r.runGroup(ctx, cr, onDeleteGroup, box.OnDelete, true, d, want); err != nil {
		return "", nil, err
	}
	var failed []*batchv1.Job
	for _, name := range sortedWanted(want, "job") {
		job := &batchv1.Job{}
		if err := r.engine.applier.Get(ctx, client.ObjectKey{Namespace: cr.GetNamespace(), Name: name}, job); err != nil {
			if apierrors.IsNotFound(err) { // just created; the cache has not seen it yet
				return "waiting for onDelete Job " + name, nil, nil
			}
			return "", nil, fmt.Errorf("get onDelete Job %s/%s: %w", cr.GetNamespace(), name, err)
		}
		if !isOnDeleteJob(job, cr) {
			return "", nil, fmt.Errorf("%w: onDelete Job %s/%s: the Job of that name was not written by the onDelete of this deletion (it lacks the %s annotation with the UID of %s %s), so it is not taken for the cleanup; give the onDelete Job a name of its own",
				ErrOnDeleteJobConflict, job.Namespace, job.Name, OnDeleteJobAnnotation, cr.GetKind(), cr.GetName())
		}
		if !jobFinished(job) {
			return "waiting for onDelete Job " + name, nil, nil
		}
		if jobFailed(job) != nil {
			failed = append(failed, job)
		}
	}
	return "", failed, nil
}

// markOnDeleteJobs makes the Jobs among decls carry OnDeleteJobAnnotation with cr's UID,
// so that the deletion tells them from other Jobs of the same name.
func markOnDeleteJobs(decls []objectDecl, cr client.Object) {
	uid := string(cr.GetUID())
	for i := range decls {
		if decls[i].kind != "job" {
			continue
		}
		build := decls[i].build
		decls[i].build = func(r *renderer, m metav1.ObjectMeta) (client.Object, error) {
			annotations := make(map[string]string, len(m.Annotations)+1)
			for k, v := range m.Annotations {
				annotations[k] = v
			}
			annotations[OnDeleteJobAnnotation] = uid
			m.Annotations = annotations
			return build(r, m)
		}
	}
}

// isOnDeleteJob reports whether job was written by the onDelete of cr's deletion.
func isOnDeleteJob(job *batchv1.Job, cr client.Object) bool {
	uid := string(cr.GetUID())
	return uid != "" && job.Annotations[OnDeleteJobAnnotation] == uid
}

// giveUpAt is when the onDelete of cr gives up: OnDeleteGiveUpAfter after its
// deletionTimestamp.
func (r *crdReconciler) giveUpAt(cr client.Object) time.Time {
	after := r.engine.opts.OnDeleteGiveUpAfter
	if after <= 0 {
		after = DefaultOnDeleteGiveUpAfter
	}
	deleted := cr.GetDeletionTimestamp()
	if deleted == nil {
		return time.Now().Add(after)
	}
	return deleted.Add(after)
}

// abandon gives the onDelete of v up, why being what it still failed or waited for:
// it removes the finalizer and records a Warning event with reason
// ReasonOnDeleteAbandoned naming the custom resource.
func (r *crdReconciler) abandon(ctx context.Context, v *crView, why string) error {
	cr := v.Unstructured
	if _, err := reconcile.RemoveFinalizer(ctx, r.engine.applier, cr, Finalizer); err != nil {
		return fmt.Errorf("remove finalizer of %s %s/%s: %w", cr.GetKind(), cr.GetNamespace(), cr.GetName(), err)
	}
	after := r.engine.opts.OnDeleteGiveUpAfter
	if after <= 0 {
		after = DefaultOnDeleteGiveUpAfter
	}
	note := fmt.Sprintf("gave up onDelete of %s %s/%s after %s: %s; the finalizer was removed, so the cleanup onDelete does may not have happened",
		cr.GetKind(), cr.GetNamespace(), cr.GetName(), after, why)
	reconcile.MarkFalse(v, reconcile.ConditionReady, ReasonDeleting, note)
	log.FromContext(ctx).Info("onDelete given up; finalizer removed", "after", after.String(), "reason", why)
	r.engine.opts.Recorder.Eventf(cr, nil, corev1.EventTypeWarning, ReasonOnDeleteAbandoned, "Delete", "%s", note)
	return nil
}

// skip removes the finalizer of v without running onDelete, whose namespace is being
// deleted, and records a Warning event with reason ReasonOnDeleteSkipped.
func (r *crdReconciler) skip(ctx context.Context, v *crView) error {
	cr := v.Unstructured
	if _, err := reconcile.RemoveFinalizer(ctx, r.engine.applier, cr, Finalizer); err != nil {
		return fmt.Errorf("remove finalizer of %s %s/%s: %w", cr.GetKind(), cr.GetNamespace(), cr.GetName(), err)
	}
	note := fmt.Sprintf("namespace %s is being deleted: onDelete of %s %s/%s was not run (no call made, nothing created) and the finalizer was removed",
		cr.GetNamespace(), cr.GetKind(), cr.GetNamespace(), cr.GetName())
	reconcile.MarkFalse(v, reconcile.ConditionReady, ReasonDeleting, note)
	log.FromContext(ctx).Info("namespace being deleted: onDelete not run; finalizer removed", "namespace", cr.GetNamespace())
	r.engine.opts.Recorder.Eventf(cr, nil, corev1.EventTypeWarning, ReasonOnDeleteSkipped, "Delete", "%s", note)
	return nil
}

// terminatingNamespace is the first step of a deletion pass: a custom resource that
// holds the finalizer in a namespace being deleted (or gone) has it removed without
// onDelete running, since nothing can be created there any more (skip). When the
// namespace cannot be read, the pass goes on as in any other namespace.
func (r *crdReconciler) terminatingNamespace(ctx context.Context, v *crView) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(v, Finalizer) || r.box.OnDelete == nil || v.GetNamespace() == "" {
		return ctrl.Result{}, nil
	}
	ns := &corev1.Namespace{}
	err := r.engine.apiReader.Get(ctx, client.ObjectKey{Name: v.GetNamespace()}, ns)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		log.FromContext(ctx).V(1).Info("cannot tell whether the namespace is being deleted; running onDelete", "namespace", v.GetNamespace(), "error", err.Error())
		return ctrl.Result{}, nil
	case ns.DeletionTimestamp == nil && ns.Status.Phase != corev1.NamespaceTerminating:
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.skip(ctx, v)
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
