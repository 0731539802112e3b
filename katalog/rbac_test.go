package katalog_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/katalog"
)

// TestClusterRole: the ClusterRole names each enabled CRD entry's custom resources,
// their status and finalizers, the child kinds, events, Namespaces, TokenReviews and
// SubjectAccessReviews, and no Leases; a disabled entry is left out, and the same
// Katalogs give the same rules in any order.
func TestClusterRole(t *testing.T) {
	two, err := katalog.Parse("two.yaml", []byte(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: two}
spec:
  crds:
    zeta:
      apiTypes: {group: b.example, version: v1, kind: Zeta, plural: zetas}
    alpha:
      apiTypes: {group: a.example, version: v1, kind: Alpha, plural: alphas}
    off:
      enabled: false
      apiTypes: {group: c.example, version: v1, kind: Off, plural: offs}
`))
	if err != nil {
		t.Fatal(err)
	}
	role := katalog.ClusterRole("engine", two)
	if role.Name != "engine" || role.Kind != "ClusterRole" || role.APIVersion != "rbac.authorization.k8s.io/v1" {
		t.Fatalf("ClusterRole %s %s %q", role.APIVersion, role.Kind, role.Name)
	}
	grants := func(group, resource, verb string) bool {
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
				return true
			}
		}
		return false
	}
	for _, want := range []struct{ group, resource, verb string }{
		{"a.example", "alphas", "watch"}, {"a.example", "alphas", "patch"}, {"a.example", "alphas/status", "patch"},
		{"a.example", "alphas/finalizers", "update"}, {"b.example", "zetas", "list"},
		{"", "secrets", "create"}, {"", "secrets", "delete"}, {"apps", "deployments", "patch"}, {"batch", "cronjobs", "watch"},
		{"", "serviceaccounts", "get"}, {"", "events", "create"}, {"", "events", "list"}, {"events.k8s.io", "events", "patch"},
		{"", "namespaces", "get"}, {"authentication.k8s.io", "tokenreviews", "create"},
		{"authorization.k8s.io", "subjectaccessreviews", "create"},
	} {
		if !grants(want.group, want.resource, want.verb) {
			t.Errorf("no %s on %s in group %q", want.verb, want.resource, want.group)
		}
	}
	for _, notWanted := range []struct{ group, resource, verb string }{
		{"c.example", "offs", "get"}, {"a.example", "alphas", "delete"}, {"", "namespaces", "list"}, {"", "secrets", "deletecollection"},
		{"coordination.k8s.io", "leases", "get"}, {"coordination.k8s.io", "leases", "delete"},
	} {
		if grants(notWanted.group, notWanted.resource, notWanted.verb) {
			t.Errorf("%s on %s in group %q is granted; nothing needs it", notWanted.verb, notWanted.resource, notWanted.group)
		}
	}
	if diff := cmp.Diff(role.Rules, katalog.ClusterRole("engine", two).Rules); diff != "" {
		t.Errorf("two calls differ:\n%s", diff)
	}
	if role.Rules[0].APIGroups[0] != "a.example" {
		t.Errorf("the rules are not sorted by group: first %v", role.Rules[0])
	}
	empty := katalog.ClusterRole("engine")
	if slices.ContainsFunc(empty.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "alphas") }) {
		t.Error("a ClusterRole of no Katalog names a custom resource")
	}
}

// TestLeaseRole: leader election's Role grants Leases in its namespace, without delete.
func TestLeaseRole(t *testing.T) {
	role := katalog.LeaseRole("engine", "katalog-system")
	want := &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: "engine", Namespace: "katalog-system"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch"}}},
	}
	if diff := cmp.Diff(want, role); diff != "" {
		t.Errorf("LeaseRole (-want +got):\n%s", diff)
	}
}
