package keystone

import (
	"context"
	"errors"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
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

// reconcileRotationAccess is the unnamed row before the Keys group: unless
// Options.RotationServiceAccount names a ServiceAccount of the user's, it applies, each
// controlled by k, the ServiceAccount rotation.ServiceAccountName(k), a Role of the same
// name holding rotation.PolicyRules(k), and a RoleBinding of that Role to that
// ServiceAccount. The key-rotation and password-rotation CronJobs run their pods as that
// ServiceAccount. An existing object k does not control, or one being deleted, is left
// untouched and sets FernetKeysReady and CredentialKeysReady False
// (KeysNotControlled); any failure ends the pass with its error.
func (r *Reconciler) reconcileRotationAccess(ctx context.Context, k *v1alpha1.Keystone) (ctrl.Result, error) {
	if r.opts.RotationServiceAccount != "" {
		return ctrl.Result{}, nil
	}
	c := r.targetOf(ctx).Client
	sa, role, binding := rotation.Access(k, r.opts.FieldManager)
	for _, obj := range []client.Object{sa, role, binding} {
		if err := apply.EnsureObject(ctx, c, c.Scheme(), k, obj, r.opts.FieldManager); err != nil {
			err = fmt.Errorf("rotation access of Keystone %s/%s: %w", k.Namespace, k.Name, err)
			if errors.Is(err, apply.ErrNotControlled) || errors.Is(err, apply.ErrBeingDeleted) {
				for _, cond := range []string{ConditionFernetKeysReady, ConditionCredentialKeysReady} {
					reconcile.MarkFalse(k, cond, ReasonKeysNotControlled, err.Error())
				}
			}
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}
