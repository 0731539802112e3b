// Package job runs one-shot Kubernetes Jobs and keeps CronJobs for operators built with
// the SDK.
//
// [RunJob] creates a Job once and reports completion as data. Each Job carries a re-run
// key in the [PodSpecHashAnnotation] annotation: by default the digest of its pod
// template ([PodTemplateHash]), or the digest of an explicit key ([RunJobWithKey]). A
// finished Job (complete or permanently failed) whose key no longer matches is deleted
// with background propagation and created again, so a Job that failed under a since
// fixed spec (a new image, a corrected ConfigMap, a rotated password) runs again
// instead of wedging; a permanently failed Job whose key is unchanged returns an error
// wrapping [ErrJobFailed]. Running Jobs are never touched and Jobs are never updated
// in place.
//
//	done, err := job.RunJob(ctx, c, scheme, keystone, dbSyncJob(keystone))
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
// containers) is refused with [ErrInvalidJob] before any request.
//
// [EnsureCronJob] applies a CronJob through Server-Side Apply (package apply); spec
// changes take effect from the next scheduled run.
package job
