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
//     request; a Job that sets spec.ttlSecondsAfterFinished also wraps
//     [ErrTTLAfterFinished]; a nil scheme wraps apply.ErrNilScheme) and when a Job of
//     that name exists that owner does not control ([ErrNotControlled]).
//
// Behaviour:
//
//   - A missing Job is created with owner as controller (through an apply.Applier
//     with ApplierOptions.Remote: with owner's claim labels and no owner reference,
//     see apply.SetOwnership) and the re-run key in the [PodSpecHashAnnotation]
//     annotation; on return job holds the server's copy.
//   - A running Job is never touched, whatever its key.
//   - A completed or permanently failed Job whose stored key differs from the desired
//     one is deleted with background propagation (the garbage collector removes its
//     pods; the delete is preconditioned on the UID that was read, so a Job created
//     in between is never removed) and created again in the same call. If the old Job
//     is still there (a finalizer holds it), RunJob returns (false, nil) and creates
//     the new one on a later call.
//   - Jobs are never updated in place (their pod template is immutable).
//   - A Job of that name that owner does not control (made by kubectl or Helm, or
//     controlled by another object) is neither read for its result nor deleted nor
//     re-created: the call fails with an error wrapping [ErrNotControlled] (a
//     *apply.NotControlledError naming the controller, or saying there is none) and
//     sends no write. RunJob never adopts a Job, not even one marked with
//     apply.AdoptAnnotation: a run cannot be taken over, only redone; delete the Job
//     to let owner run its own. One that owner does not control and that is being
//     deleted is refused with an error wrapping apply.ErrBeingDeleted; once it is gone
//     RunJob creates owner's Job.
//
// RunJob keeps no record of a run outside the Job: deleting the Job (by hand, or by a
// TTL, which is why a Job with spec.ttlSecondsAfterFinished is refused) runs it again
// on the next call.
//
// The Job it creates and a finished run it deletes for a re-run are reported through
// apply.Record (apply.ActionCreated, apply.ActionDeleted); a call that writes nothing
// records nothing.
//
// Call it on every reconcile pass; once the Job has completed, further calls write
// nothing and cost one GET, which a manager's cached client (or an apply.Applier over
// it) serves from its informer: no request at all.
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
// digest: the Job runs again (once finished) only when rerunKey changes. Use it for a
// Job whose template changes for reasons that must not re-run it, such as a bootstrap
// Job that must run again when the admin password is rotated but not on every image
// upgrade. An empty rerunKey is refused with [ErrInvalidJob].
//
// The re-run key must not be a secret. Pass non-secret material that changes when the
// secret does: a version you keep for it (a rotation counter, the generation of the
// object that asks for the rotation), the resourceVersion of the Secret that holds it
// (which also changes, and re-runs the Job, on any other write to that Secret), or a
// digest you compute with a key only your operator holds. Never pass the password, nor
// an unkeyed digest of it.
//
// The [PodSpecHashAnnotation] annotation stores HMAC-SHA256 of rerunKey (and of the
// Job's namespace/name), keyed with owner's UID, never the key itself. Keying with the
// UID, which is random and differs for every owner, makes the same key give unrelated
// digests for different owners and Jobs, so digests cannot be compared across Jobs or
// looked up in a table computed in advance. It does not keep a guessable key secret:
// the UID is visible in the Job's owner reference, so anyone who can read the Job can
// test guesses one by one, offline. That is why the key must not be a secret; a
// per-owner secret to key the digest with would need a Secret of its own, read on
// every pass, and would only move the problem to that Secret. Deriving from the UID
// needs no extra object, request or permission.
//
// A finished Job created by an SDK version before the keyed digest carries an unkeyed
// SHA-256 in the annotation, which never matches: each such Job runs once more, and is
// then stable again.
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
