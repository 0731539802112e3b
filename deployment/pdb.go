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
//
// A PodDisruptionBudget of that name that owner does not control is refused with an
// error wrapping apply.ErrNotControlled that names its controller, and one being deleted
// with apply.ErrBeingDeleted; neither is written (see apply.EnsureObject). A nil scheme
// is refused with apply.ErrNilScheme before any request.
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
	if err := apply.CheckScheme(scheme); err != nil {
		return fmt.Errorf("ensure PodDisruptionBudget %s: %w", keyOf(pdb), err)
	}
	if err := apply.EnsureObject(ctx, c, scheme, owner, pdb, apply.FieldManager); err != nil {
		return fmt.Errorf("ensure PodDisruptionBudget: %w", err)
	}
	return nil
}
