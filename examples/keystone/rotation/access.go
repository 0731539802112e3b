package rotation

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
)

// ServiceAccountName is the ServiceAccount k's rotation pods run as unless the
// operator names one of the user's: k's name followed by "-rotation". The Role and the
// RoleBinding of [Access] have the same name.
func ServiceAccountName(k *v1alpha1.Keystone) string { return k.Name + "-rotation" }

// PolicyRules are the rules the rotate-keys and rotate-password commands need for k,
// and nothing else: [SecretRules] over k's fernet key, credential key and database
// password Secrets.
func PolicyRules(k *v1alpha1.Keystone) []rbacv1.PolicyRule {
	return SecretRules(names.FernetKeysSecretName(k), names.CredentialKeysSecretName(k), names.DatabasePasswordSecretName(k))
}

// Access builds the ServiceAccount [ServiceAccountName](k), a Role of that name
// holding [PolicyRules](k), and the RoleBinding of that Role to that ServiceAccount,
// labelled with component "rotation" and the managed-by label fieldManager.
func Access(k *v1alpha1.Keystone, fieldManager string) (*corev1.ServiceAccount, *rbacv1.Role, *rbacv1.RoleBinding) {
	name := ServiceAccountName(k)
	meta := func() metav1.ObjectMeta {
		l := names.Labels(k, "rotation")
		l[apply.ManagedByLabel] = fieldManager
		return metav1.ObjectMeta{Name: name, Namespace: k.Namespace, Labels: l}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: meta()}
	role := &rbacv1.Role{ObjectMeta: meta(), Rules: PolicyRules(k)}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: meta(),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: k.Namespace}},
	}
	return sa, role, binding
}
