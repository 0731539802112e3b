package job

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// EnsureCronJob creates or updates the CronJob cronJob, controlled by owner, through
// Server-Side Apply under apply.FieldManager. A converged CronJob is not rewritten;
// a changed spec is applied and takes effect from the next scheduled run (Jobs already
// started keep their template). On return cronJob holds the server's copy. The apply
// is reported through apply.Record like every apply.EnsureObject. A converged call
// costs one GET and one no-op PATCH through a plain client, and no request at all
// through an apply.Applier over a manager's cached client (the GET is served by the
// informer and the Applier skips the converged apply).
//
// A CronJob of that name that owner does not control (made by kubectl or Helm, or
// controlled by another object) is refused with an error wrapping apply.ErrNotControlled
// that names its controller, and one being deleted with apply.ErrBeingDeleted; neither
// is written (see apply.EnsureObject, which also adopts an uncontrolled CronJob marked
// with apply.AdoptAnnotation). A nil scheme is refused with apply.ErrNilScheme before any
// request.
func EnsureCronJob(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	cronJob *batchv1.CronJob,
) error {
	if cronJob == nil {
		return fmt.Errorf("ensure CronJob: %w", apply.ErrNilObject)
	}
	if err := apply.CheckScheme(scheme); err != nil {
		return fmt.Errorf("ensure CronJob %s: %w", keyOf(cronJob), err)
	}
	if err := apply.EnsureObject(ctx, c, scheme, owner, cronJob, apply.FieldManager); err != nil {
		return fmt.Errorf("ensure CronJob: %w", err)
	}
	return nil
}
