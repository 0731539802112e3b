package testenv

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ServiceAccountToken creates the ServiceAccount ns/name, binds it cluster-wide to a
// ClusterRole "<ns>-<name>" holding rules (none: no role and no binding), and returns a
// token of it from the TokenRequest API: a bearer token the API server authenticates, for
// tests of endpoints behind TokenReview and SubjectAccessReview (metrics, inspectors).
// The role and binding are deleted when the test ends; the ServiceAccount goes with ns.
func (e *Env) ServiceAccountToken(t testing.TB, ns, name string, rules ...rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	if err := e.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		t.Fatalf("testenv: ServiceAccount %s/%s: %v", ns, name, err)
	}
	if len(rules) > 0 {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name}, Rules: rules}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
		}
		for _, obj := range []client.Object{role, binding} {
			if err := e.Client.Create(ctx, obj); err != nil {
				t.Fatalf("testenv: %T %s: %v", obj, obj.GetName(), err)
			}
			t.Cleanup(func() { _ = e.Client.Delete(context.Background(), obj) })
		}
	}
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		t.Fatalf("testenv: clientset: %v", err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("testenv: token of %s/%s: %v", ns, name, err)
	}
	return tr.Status.Token
}
