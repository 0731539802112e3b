package job

import (
	"context"
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// MaxNameLength is the longest Job name RunJob accepts: the Job controller copies the
// name into the batch.kubernetes.io/job-name label of every pod, and a label value
// holds at most 63 characters.
const MaxNameLength = 63

// jobGVK names the Job kind in errors about Jobs the owner does not control.
var jobGVK = batchv1.SchemeGroupVersion.WithKind("Job")

// RunJob runs job once, owned by owner, with [PodTemplateHash] of its pod template as
// the re-run key, and reports whether it has completed: (true, nil) once it is Complete
// with the current key; (false, nil) while it is created, running, being deleted or
// re-run because its key changed; an error wrapping [ErrJobFailed] when it failed with
// the current key. A Job owner does not control is refused ([ErrNotControlled]), bad
// input before any request ([ErrInvalidJob]). Call it on every pass: a completed Job
// costs one GET, none through a cached client (the package documentation).
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
	if err := check(scheme, owner, job); err != nil {
		return false, err
	}
	key, err := PodTemplateHash(&job.Spec.Template)
	if err != nil {
		return false, fmt.Errorf("run Job %s: %w", keyOf(job), err)
	}
	return run(ctx, c, scheme, owner, job, key)
}

// RunJobWithKey is [RunJob] with an explicit re-run key instead of the pod template's
// digest: the finished Job runs again only when rerunKey changes (a bootstrap Job re-run
// on a password rotation, not on every image upgrade). rerunKey must not be a secret:
// the Job stores an HMAC of it keyed with owner's UID, against which anyone who can read
// the Job can test guesses (package documentation, "Re-run keys are not secrets"). An
// empty rerunKey wraps [ErrInvalidJob].
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
	if err := check(scheme, owner, job); err != nil {
		return false, err
	}
	return run(ctx, c, scheme, owner, job, keyDigest(owner.GetUID(), client.ObjectKeyFromObject(job), rerunKey))
}

// check refuses, before any API call, a nil scheme and a Job that RunJob cannot run.
func check(scheme *runtime.Scheme, owner client.Object, job *batchv1.Job) error {
	desc := "Job " + keyOf(job)
	if err := apply.CheckScheme(scheme); err != nil {
		return fmt.Errorf("run %s: %w", desc, err)
	}
	if err := validate(owner, job); err != nil {
		return fmt.Errorf("run %s: %w", desc, err)
	}
	return nil
}

// run runs job, which check accepted, under the re-run key key.
func run(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object, job *batchv1.Job, key string) (bool, error) {
	desc := "Job " + keyOf(job)
	if err := apply.SetOwnership(c, scheme, owner, job); err != nil {
		return false, fmt.Errorf("run %s: %w", desc, err)
	}

	existing := &batchv1.Job{}
	err := c.Get(ctx, client.ObjectKeyFromObject(job), existing)
	switch {
	case apierrors.IsNotFound(err):
		return false, create(ctx, c, job, key, desc)
	case err != nil:
		return false, fmt.Errorf("run %s: get: %w", desc, err)
	case existing.DeletionTimestamp != nil:
		if ctrlErr := apply.CheckControlled(c, owner, existing, jobGVK); ctrlErr != nil {
			return false, fmt.Errorf("run %s: %w (%s); retry once it is gone", desc, apply.ErrBeingDeleted, ctrlErr.Error())
		}
		// Deleted for a re-run (or by someone else): create it once it is gone.
		return false, nil
	}
	if err := notControlled(c, owner, existing); err != nil {
		return false, fmt.Errorf("run %s: %w", desc, err)
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
		switch {
		case err == nil:
			apply.Record(ctx, apply.Write{Action: apply.ActionDeleted, GVK: jobGVK, Key: client.ObjectKeyFromObject(existing)})
		case !apierrors.IsNotFound(err):
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

// notControlled returns nil when owner controls existing, and otherwise an error
// wrapping the *apply.NotControlledError, worded for a Job: RunJob adopts no Job, so a
// Job without a controller or claim is not offered for adoption.
func notControlled(c client.Client, owner client.Object, existing *batchv1.Job) error {
	err := apply.CheckControlled(c, owner, existing, jobGVK)
	var nce *apply.NotControlledError
	if err == nil || !errors.As(err, &nce) || nce.Claim != nil || nce.Controller != nil {
		return err
	}
	state := "has no controller"
	switch {
	case nce.PartialClaim:
		state = "carries an incomplete owner claim"
	case nce.Remote:
		state = "is not claimed by any owner"
	}
	return &refusal{err: err, text: fmt.Sprintf("%s: the Job exists and %s; a run cannot be adopted "+
		"(not even with %s=true), so it is neither read nor deleted: delete it to let %s run its own",
		apply.ErrNotControlled, state, apply.AdoptAnnotation, keyOf(owner))}
}

// refusal is an error with its own text that wraps err, for errors.Is and errors.As.
type refusal struct {
	text string
	err  error
}

func (r *refusal) Error() string { return r.text }
func (r *refusal) Unwrap() error { return r.err }

// create creates job with the re-run key annotation and records the write. A Job that
// still exists (the old run is not gone yet) is no error: the next call sees it.
func create(ctx context.Context, c client.Client, job *batchv1.Job, key, desc string) error {
	if job.Annotations == nil {
		job.Annotations = map[string]string{}
	}
	job.Annotations[PodSpecHashAnnotation] = key
	job.ResourceVersion = ""
	err := c.Create(ctx, job, client.FieldOwner(apply.FieldManager))
	switch {
	case err == nil:
		apply.Record(ctx, apply.Write{Action: apply.ActionCreated, GVK: jobGVK, Key: client.ObjectKeyFromObject(job)})
	case !apierrors.IsAlreadyExists(err):
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
	case job.Spec.TTLSecondsAfterFinished != nil:
		return fmt.Errorf("%w: %w (%d): once the TTL controller deleted the finished Job, RunJob would run it again; leave the field unset",
			ErrInvalidJob, ErrTTLAfterFinished, *job.Spec.TTLSecondsAfterFinished)
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
