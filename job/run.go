package job

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/apply"
)

// MaxNameLength is the longest Job name RunJob accepts: the Job controller copies the
// name into the batch.kubernetes.io/job-name label of every pod, and a label value
// holds at most 63 characters.
const MaxNameLength = 63

// RunJob runs job once, controlled by owner, and reports whether it has completed. Its
// re-run key is [PodTemplateHash] of job.Spec.Template: a changed pod template (a new
// image, a new config hash annotation) runs the Job again once the previous run has
// finished.
//
// It returns
//
//   - (true, nil) when the Job has a Complete condition with status True and its
//     re-run key is unchanged;
//   - (false, nil) when the Job was just created, is still running, is being deleted,
//     or was deleted and re-created because its re-run key changed;
//   - (false, err) with err wrapping [ErrJobFailed] when the Job has a Failed condition
//     (e.g. it exceeded its backoffLimit) and its re-run key is unchanged: running it
//     again would fail again, so nothing is touched and the caller stops requeueing
//     until the spec is fixed;
//   - (false, err) on API failures, on bad input ([ErrInvalidJob], refused before any
//     request) and when a Job of that name exists that owner does not control
//     ([ErrNotControlled]).
//
// Behaviour:
//
//   - A missing Job is created with owner as controller and the re-run key in the
//     [PodSpecHashAnnotation] annotation; on return job holds the server's copy.
//   - A running Job is never touched, whatever its key.
//   - A completed or permanently failed Job whose stored key differs from the desired
//     one is deleted with background propagation (the garbage collector removes its
//     pods) and created again in the same call. If the old Job is still there (a
//     finalizer holds it), RunJob returns (false, nil) and creates the new one on a
//     later call.
//   - Jobs are never updated in place (their pod template is immutable).
//
// Call it on every reconcile pass; once the Job has completed, further calls cost one
// GET and write nothing.
func RunJob(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	job *batchv1.Job,
) (bool, error) {
	if job == nil {
		return false, fmt.Errorf("run Job: %w: job is nil", ErrInvalidJob)
	}
	key, err := PodTemplateHash(&job.Spec.Template)
	if err != nil {
		return false, fmt.Errorf("run Job %s: %w", keyOf(job), err)
	}
	return run(ctx, c, scheme, owner, job, key)
}

// RunJobWithKey is [RunJob] with an explicit re-run key instead of the pod template's
// digest: the Job runs again (once finished) only when rerunKey changes. Use it for a
// Job whose template changes for reasons that must not re-run it, such as a bootstrap
// Job keyed on the digest of the admin password, which must not run again on every
// image upgrade. The annotation stores the SHA-256 of rerunKey, never the key itself.
// An empty rerunKey is refused with [ErrInvalidJob].
func RunJobWithKey(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	job *batchv1.Job,
	rerunKey string,
) (bool, error) {
	if job == nil {
		return false, fmt.Errorf("run Job: %w: job is nil", ErrInvalidJob)
	}
	if rerunKey == "" {
		return false, fmt.Errorf("run Job %s: %w: the re-run key is empty", keyOf(job), ErrInvalidJob)
	}
	return run(ctx, c, scheme, owner, job, keyDigest(rerunKey))
}

func run(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object, job *batchv1.Job, key string) (bool, error) {
	desc := "Job " + keyOf(job)
	if err := validate(owner, job); err != nil {
		return false, fmt.Errorf("run %s: %w", desc, err)
	}
	if err := controllerutil.SetControllerReference(owner, job, scheme); err != nil {
		return false, fmt.Errorf("run %s: %w: %w", desc, apply.ErrInvalidOwner, err)
	}

	existing := &batchv1.Job{}
	err := c.Get(ctx, client.ObjectKeyFromObject(job), existing)
	switch {
	case apierrors.IsNotFound(err):
		return false, create(ctx, c, job, key, desc)
	case err != nil:
		return false, fmt.Errorf("run %s: get: %w", desc, err)
	case existing.DeletionTimestamp != nil:
		// Deleted for a re-run (or by someone else): create it once it is gone.
		return false, nil
	case !metav1.IsControlledBy(existing, owner):
		return false, fmt.Errorf("run %s: %w %s", desc, ErrNotControlled, keyOf(owner))
	}

	complete, failed := isJobComplete(existing), isJobFailed(existing)
	if !complete && !failed {
		return false, nil // running: never touched
	}
	if existing.Annotations[PodSpecHashAnnotation] != key {
		outcome := "completed"
		if failed {
			outcome = "failed"
		}
		err := c.Delete(ctx, existing,
			client.PropagationPolicy(metav1.DeletePropagationBackground),
			client.Preconditions{UID: new(existing.UID)})
		if err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("run %s: delete the %s run for a re-run: %w", desc, outcome, err)
		}
		return false, create(ctx, c, job, key, desc)
	}
	if failed {
		cond, _ := trueCondition(existing, batchv1.JobFailed)
		return false, fmt.Errorf("run %s: %w: %s: %s", desc, ErrJobFailed, cond.Reason, cond.Message)
	}
	*job = *existing
	return true, nil
}

// create creates job with the re-run key annotation. A Job that still exists (the old
// run is not gone yet) is no error: the next call sees it.
func create(ctx context.Context, c client.Client, job *batchv1.Job, key, desc string) error {
	if job.Annotations == nil {
		job.Annotations = map[string]string{}
	}
	job.Annotations[PodSpecHashAnnotation] = key
	job.ResourceVersion = ""
	err := c.Create(ctx, job, client.FieldOwner(apply.FieldManager))
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("run %s: create: %w", desc, err)
	}
	return nil
}

// isJobComplete reports whether job has a Complete condition with status True.
func isJobComplete(job *batchv1.Job) bool {
	_, ok := trueCondition(job, batchv1.JobComplete)
	return ok
}

// isJobFailed reports whether job has a Failed condition with status True: it failed
// permanently (backoffLimit, activeDeadlineSeconds, a pod failure policy). A
// FailureTarget condition alone does not count: the Job controller is still
// terminating its pods and sets Failed once they are gone.
func isJobFailed(job *batchv1.Job) bool {
	_, ok := trueCondition(job, batchv1.JobFailed)
	return ok
}

// trueCondition returns job's condition of type t if its status is True.
func trueCondition(job *batchv1.Job, t batchv1.JobConditionType) (batchv1.JobCondition, bool) {
	for _, cond := range job.Status.Conditions {
		if cond.Type == t && cond.Status == corev1.ConditionTrue {
			return cond, true
		}
	}
	return batchv1.JobCondition{}, false
}

// validate refuses, before any API call, a Job RunJob cannot run.
func validate(owner client.Object, job *batchv1.Job) error {
	switch {
	case job.Name == "":
		return fmt.Errorf("%w: metadata.name is empty", ErrInvalidJob)
	case len(job.Name) > MaxNameLength:
		return fmt.Errorf("%w: metadata.name has %d characters, at most %d are allowed (it becomes the job-name label value of the Job's pods)",
			ErrInvalidJob, len(job.Name), MaxNameLength)
	case job.Namespace == "":
		return fmt.Errorf("%w: metadata.namespace is empty", ErrInvalidJob)
	case len(job.Spec.Template.Spec.Containers) == 0:
		return fmt.Errorf("%w: spec.template.spec.containers is empty", ErrInvalidJob)
	}
	return apply.Validate(owner, job)
}

// keyOf names an object as namespace/name (name alone when cluster-scoped).
func keyOf(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
