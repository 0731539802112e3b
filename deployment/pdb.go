package deployment

import (
	"context"
	"fmt"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// EnsurePodDisruptionBudget creates or updates the PodDisruptionBudget pdb, controlled
// by owner, through Server-Side Apply under apply.FieldManager. A converged
// PodDisruptionBudget is not rewritten. On return pdb holds the server's copy (its
// status is the disruption controller's business and is not reported as readiness).
func EnsurePodDisruptionBudget(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	pdb *policyv1.PodDisruptionBudget,
) error {
	if pdb == nil {
		return fmt.Errorf("ensure PodDisruptionBudget: %w", apply.ErrNilObject)
	}
	if err := apply.EnsureObject(ctx, c, scheme, owner, pdb, apply.FieldManager); err != nil {
		return fmt.Errorf("ensure PodDisruptionBudget: %w", err)
	}
	return nil
}
