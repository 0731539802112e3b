package keystone

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// rotationServiceAccount is the ServiceAccount of k's rotation pods:
// Options.RotationServiceAccount when set, else rotation.ServiceAccountName(k).
func (r *Reconciler) rotationServiceAccount(k *v1alpha1.Keystone) string {
	if r.opts.RotationServiceAccount != "" {
		return r.opts.RotationServiceAccount
	}
	return rotation.ServiceAccountName(k)
}

// reconcileRotationAccess is the RotationAccess row before the Keys group: unless
// Options.RotationServiceAccount names a ServiceAccount of the user's, it applies, each
// controlled by k, the ServiceAccount rotation.ServiceAccountName(k), a Role of the same
// name holding rotation.PolicyRules(k), and a RoleBinding of that Role to that
// ServiceAccount. The key-rotation and password-rotation CronJobs run their pods as that
// ServiceAccount. An existing object k does not control, or one being deleted, is left
// untouched and sets FernetKeysReady and CredentialKeysReady False
// (KeysNotControlled); any failure ends the pass with its error.
func (r *Reconciler) reconcileRotationAccess(ctx context.Context, k *v1alpha1.Keystone) (reconcile.Outcome, error) {
	if r.opts.RotationServiceAccount != "" {
		return reconcile.Outcome{}, nil
	}
	c := r.TargetOf(ctx).Client
	sa, role, binding := rotation.Access(k, r.opts.FieldManager)
	for _, obj := range []client.Object{sa, role, binding} {
		if err := apply.EnsureObject(ctx, c, c.Scheme(), k, obj, r.opts.FieldManager); err != nil {
			err = fmt.Errorf("rotation access of Keystone %s/%s: %w", k.Namespace, k.Name, err)
			if !errors.Is(err, apply.ErrNotControlled) && !errors.Is(err, apply.ErrBeingDeleted) {
				return reconcile.Outcome{}, err
			}
			// The row has no condition of its own: the refusal shows on both Keys rows.
			reconcile.ApplyCondition(k, reconcile.FalseCondition(ConditionCredentialKeysReady, ReasonKeysNotControlled, err.Error()))
			return reconcile.Done(reconcile.FalseCondition(ConditionFernetKeysReady, ReasonKeysNotControlled, err.Error())), err
		}
	}
	return reconcile.Outcome{}, nil
}
