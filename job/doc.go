// Package job runs one-shot Kubernetes Jobs and keeps CronJobs for operators built with
// the SDK.
//
// [RunJob] creates a Job once and reports completion as data. Each Job carries a re-run
// key in the [PodSpecHashAnnotation] annotation: by default the digest of its pod
// template ([PodTemplateHash]), or a keyed digest of an explicit key ([RunJobWithKey]).
// A finished Job (complete or permanently failed) whose key no longer matches is
// deleted with background propagation (preconditioned on the UID that was read) and
// created again, so a Job that failed under a since fixed spec (a new image, a
// corrected ConfigMap) runs again instead of wedging; a permanently failed Job whose
// key is unchanged returns an error wrapping [ErrJobFailed]. Running Jobs are never
// touched and Jobs are never updated in place. When the old Job is still there after
// its delete (a finalizer holds it), RunJob reports not done and creates the new one on
// a later call. On return the job passed in holds the server's copy.
//
//	done, err := job.RunJob(ctx, c, scheme, cr, dbSyncJob(cr))
//	switch {
//	case errors.Is(err, job.ErrJobFailed):
//		// set a False condition; wait for a spec change, do not requeue
//	case err != nil:
//		return ctrl.Result{}, err
//	case !done:
//		return ctrl.Result{RequeueAfter: 10 * time.Second}, nil
//	}
//
// Bad input (no name, a name longer than 63 characters, a pod template without
// containers, a nil scheme) is refused before any request, with [ErrInvalidJob] (or
// apply.ErrNilScheme).
//
// # The Job is the only record of a run
//
// RunJob keeps no record of a run anywhere but in the Job itself. Deleting the Job by
// hand therefore runs it again on the next pass; that is the way to force a re-run.
// For the same reason a run-once Job must not set spec.ttlSecondsAfterFinished: the
// TTL controller would delete the finished Job and RunJob would create it again, after
// every TTL, forever. RunJob and RunJobWithKey refuse such a Job before any request
// with an error wrapping [ErrTTLAfterFinished] (and [ErrInvalidJob]) that names the Job
// and the field. Finished Jobs stay until their owner is deleted; the garbage
// collector then removes them with it.
//
// # Re-run keys are not secrets
//
// [RunJobWithKey] stores HMAC-SHA256 of the explicit key, keyed with the owner's UID
// and bound to the Job's namespace/name, never the key itself. The same key thus gives
// unrelated digests for different owners and Jobs, and no table of digests computed in
// advance applies. The UID is no secret, though (it is in the Job's owner reference):
// anyone who can read the Job can still test guesses of the key offline. So never key
// a Job on a password or an unkeyed digest of one; pass a non-secret version that
// changes with it, such as a rotation counter, the resourceVersion of the Secret that
// holds it, or a digest you compute with a key you keep (the generation of the object
// that asks for the rotation will do; a Secret's resourceVersion also changes, and
// re-runs the Job, on any other write to that Secret). Keying with a per-owner secret
// instead of the UID would need a Secret of its own, read on every pass, and only move
// the problem to that Secret. A finished Job created before the digest was keyed
// carries an unkeyed digest that never matches, so it runs once more after the upgrade.
//
// # Ownership
//
// Both helpers follow the SDK's ownership rule (package [apply], "Ownership"): a Job or
// CronJob the owner does not control is refused with an error wrapping
// [ErrNotControlled] (a *apply.NotControlledError naming the controller) and nothing is
// written; on a target cluster "controls" means "claims". A Job is never even read for
// its result, and never adopted, not even one annotated with [apply.AdoptAnnotation]: a
// run cannot be taken over, only redone (delete it to let the owner run its own). A Job
// of someone else's that is being deleted is refused with [apply.ErrBeingDeleted]; the
// owner's own Job being deleted is waited for. Two managers running the same RunJob at
// once (a leader-election overlap) create the Job once: a create that finds the Job
// already there is no error, and a delete acting on a stale read fails on its UID
// precondition instead of removing the other manager's run.
//
// [EnsureCronJob] applies a CronJob through [apply.EnsureObject] (adoption included);
// spec changes take effect from the next scheduled run, and Jobs already started keep
// their template.
//
// # Requests and caches
//
// RunJob reads the Job through the client it is given (with a manager's cached client,
// from an informer for Jobs) and writes only to create or delete it: a completed Job
// costs one GET per pass through a plain client. EnsureCronJob reads the CronJob once
// (the control check) and applies it: a converged CronJob costs one GET and one no-op
// PATCH through a plain client.
//
// Pass an apply.Applier over the manager's cached client and a converged pass — the
// Job completed, the CronJob unchanged — sends no request at all: both reads are
// served by informers and the Applier skips the converged apply. The writes carry the
// operator's field manager (ApplierOptions.FieldManager), and every write is reported
// through apply.Record (the Job created, the finished run deleted for a re-run, the
// CronJob applied), so a reconciler collecting them with apply.WithWrites logs them
// with the rest.
//
// # Footprint
//
// Per helper: what it reads and writes, which reads start an informer when the client is
// a manager's cached client (a typed Get or List through mgr.GetClient() does; a read as
// unstructured, or through an APIReader, does not), and the RBAC verbs it needs, as
// the +kubebuilder:rbac markers in rbac.go grant them (rbac/job/role.yaml). list and
// watch come with every get: a cached read lists and watches the kind.
//
//   - [RunJob], [RunJobWithKey]: get the Job (informer: Jobs), create it when missing,
//     delete a finished run whose re-run key changed. Never patched. RBAC: batch jobs get,
//     list, watch, create, delete.
//   - [EnsureCronJob]: gets the CronJob (the control check; informer: CronJobs) and applies
//     it. RBAC: batch cronjobs get, list, watch, create, patch.
//   - [PodTemplateHash]: no API call.
//
// A converged pass costs what "Requests and caches" says: one GET for a completed Job, one
// GET and one no-op PATCH for a CronJob through a plain client; no request through an
// apply.Applier over a manager's cached client.
package job
