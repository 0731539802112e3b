package controller

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// RotationServiceAccountName is the ServiceAccount the rotation pods of k run as when
// Options.RotationServiceAccount is empty: k's name followed by "-rotation". The Role
// and the RoleBinding that grant it [RotationPolicyRules] have the same name.
func RotationServiceAccountName(k *v1alpha1.Keystone) string { return k.Name + "-rotation" }

// RotationPolicyRules are the rules of the Role RotationServiceAccountName(k): get and
// update on k's fernet key, credential key and database password Secrets, by name, and
// nothing else ([RotateKeysPolicyRules] over those three Secrets). The rotate-keys and
// rotate-password commands need exactly these.
func RotationPolicyRules(k *v1alpha1.Keystone) []rbacv1.PolicyRule {
	return RotateKeysPolicyRules(FernetKeysSecretName(k), CredentialKeysSecretName(k), DatabasePasswordSecretName(k))
}

// rotationServiceAccount is the ServiceAccount of k's rotation pods:
// Options.RotationServiceAccount when set, else RotationServiceAccountName(k).
func (r *Reconciler) rotationServiceAccount(k *v1alpha1.Keystone) string {
	if r.opts.RotationServiceAccount != "" {
		return r.opts.RotationServiceAccount
	}
	return RotationServiceAccountName(k)
}

// reconcileRotationAccess is the unnamed row before the Keys group: unless
// Options.RotationServiceAccount names a ServiceAccount of the user's, it applies, each
// controlled by k, the ServiceAccount RotationServiceAccountName(k), a Role of the same
// name holding RotationPolicyRules(k), and a RoleBinding of that Role to that
// ServiceAccount. The key-rotation and password-rotation CronJobs run their pods as that
// ServiceAccount. An existing object k does not control, or one being deleted, is left
// untouched and sets FernetKeysReady and CredentialKeysReady False
// (KeysNotControlled); any failure ends the pass with its error.
func (r *Reconciler) reconcileRotationAccess(ctx context.Context, k *v1alpha1.Keystone) (ctrl.Result, error) {
	if r.opts.RotationServiceAccount != "" {
		return ctrl.Result{}, nil
	}
	c := r.targetOf(ctx).Client
	sa, role, binding := desiredRotationAccess(k, r.opts.FieldManager)
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

// desiredRotationAccess builds the ServiceAccount, the Role and the RoleBinding of k's
// rotation pods.
func desiredRotationAccess(k *v1alpha1.Keystone, fieldManager string) (*corev1.ServiceAccount, *rbacv1.Role, *rbacv1.RoleBinding) {
	name := RotationServiceAccountName(k)
	meta := func() metav1.ObjectMeta {
		l := componentLabels(k, "rotation")
		l[apply.ManagedByLabel] = fieldManager
		return metav1.ObjectMeta{Name: name, Namespace: k.Namespace, Labels: l}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: meta()}
	role := &rbacv1.Role{ObjectMeta: meta(), Rules: RotationPolicyRules(k)}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: meta(),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: k.Namespace}},
	}
	return sa, role, binding
}
