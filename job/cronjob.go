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
// started keep their template). On return cronJob holds the server's copy.
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
	if err := apply.EnsureObject(ctx, c, scheme, owner, cronJob, apply.FieldManager); err != nil {
		return fmt.Errorf("ensure CronJob: %w", err)
	}
	return nil
}
