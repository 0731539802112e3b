package katalog

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// ClusterRole returns the ClusterRole, named name, that an engine running kats needs and
// nothing more, for a manager that reads through its cache:
//
//   - each enabled CRD entry's custom resources: get, list, watch, patch and update
//     (mutation defaults and finalizers), their status subresource get, patch and update,
//     and their finalizers update (for owner references with blockOwnerDeletion);
//   - the child kinds a Katalog can declare (ServiceAccounts, Secrets, ConfigMaps,
//     Services, Deployments, Jobs, CronJobs): get, list, watch, create, patch, update and
//     delete (a child whose gate stops passing is deleted when the custom resource
//     controls it);
//   - events in both API groups: create and patch (warn rules, and the manager's
//     recorder), list and watch in the core group (the cache the inspector shows a
//     custom resource's recent events from);
//   - get on Namespaces (the operator reads kube-system's UID once to name its cluster);
//   - create on tokenreviews (authentication.k8s.io) and subjectaccessreviews
//     (authorization.k8s.io): /metrics, and the inspector when it listens beyond the
//     loopback interface, let in only the clients the API server authenticates and
//     authorizes.
//
// Leases are not in it: leader election needs them in one namespace only, see
// [LeaseRole]. The rules are sorted, so the same Katalogs always give the same
// ClusterRole. Print both with `katalog rbac` and bind them to the ServiceAccount the
// engine runs as.
func ClusterRole(name string, kats ...*Katalog) *rbacv1.ClusterRole {
	byGroup := map[string][]string{}
	for _, kat := range kats {
		for _, crd := range kat.Spec.CRDs {
			if crd == nil || !crd.IsEnabled() {
				continue
			}
			g := crd.APITypes.Group
			byGroup[g] = append(byGroup[g], crd.APITypes.Plural)
		}
	}
	var rules []rbacv1.PolicyRule
	groups := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	for _, g := range groups {
		plurals := slices.Compact(slices.Sorted(slices.Values(byGroup[g])))
		var status, finalizers []string
		for _, p := range plurals {
			status, finalizers = append(status, p+"/status"), append(finalizers, p+"/finalizers")
		}
		rules = append(rules,
			rbacv1.PolicyRule{APIGroups: []string{g}, Resources: plurals, Verbs: []string{"get", "list", "watch", "patch", "update"}},
			rbacv1.PolicyRule{APIGroups: []string{g}, Resources: status, Verbs: []string{"get", "patch", "update"}},
			rbacv1.PolicyRule{APIGroups: []string{g}, Resources: finalizers, Verbs: []string{"update"}},
		)
	}
	childGroups := map[string][]string{}
	for _, k := range childKinds {
		gvk, err := apiutil.GVKForObject(k.newObj(), clientgoscheme.Scheme)
		if err != nil {
			panic("katalog: child kind " + k.key + " is not in client-go's scheme: " + err.Error())
		}
		childGroups[gvk.Group] = append(childGroups[gvk.Group], k.plural)
	}
	for _, g := range []string{"", "apps", "batch"} {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: slices.Sorted(slices.Values(childGroups[g])),
			Verbs: []string{"get", "list", "watch", "create", "patch", "update", "delete"}})
	}
	rules = append(rules,
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "list", "watch"}},
		rbacv1.PolicyRule{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}},
		rbacv1.PolicyRule{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
		rbacv1.PolicyRule{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
	)
	return &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      rules,
	}
}

// LeaseRole returns the Role, named name in namespace (left empty, kubectl apply -n
// places it), that leader election needs: get, list, watch, create, update and patch
// on Leases (coordination.k8s.io) in the namespace the engine runs in, where its
// Lease (--leader-election-id) lives. It grants no delete, and nothing in any other
// namespace. Print it with `katalog rbac` and bind it with a RoleBinding in that
// namespace.
func LeaseRole(name, namespace string) *rbacv1.Role {
	return &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch"}}},
	}
}
