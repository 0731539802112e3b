package job

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// EnsureCronJob creates or updates cronJob, owned by owner, with [apply.EnsureObject]
// (the ownership rule and the converged-apply skip included), and leaves the server's
// copy in cronJob. A changed spec takes effect from the next scheduled run. A nil scheme
// is refused with [apply.ErrNilScheme] before any request.
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
