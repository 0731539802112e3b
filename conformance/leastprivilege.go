package conformance

import (
	"errors"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// checkLeastPrivilege is [CheckLeastPrivilege]: the operator converges as a user bound
// to its generated ClusterRoles alone.
func (w *world) checkLeastPrivilege() error {
	if len(w.opts.ClusterRolePaths) == 0 {
		return w.violation("", "Options.ClusterRolePaths",
			"point Options.ClusterRolePaths at the ClusterRoles controller-gen generates (config/rbac/role.yaml), "+
				"or skip LeastPrivilege with a reason",
			"no ClusterRole to run the operator with")
	}
	var roles []*rbacv1.ClusterRole
	for _, p := range w.opts.ClusterRolePaths {
		rs, err := testenv.LoadClusterRoles(p)
		if err != nil {
			return err
		}
		roles = append(roles, rs...)
	}
	cfg := w.opts.Env.ConfigAs(w.t, "conformance", roles...)
	_, err := w.startAndConverge(cfg)
	forbidden := w.forbidden()
	if err == nil {
		if len(forbidden) > 0 {
			w.t.Logf("conformance: the operator converged; requests it was refused on the way: %v", forbidden)
		}
		return nil
	}
	if errors.Is(err, ErrViolation) && len(forbidden) > 0 {
		var b strings.Builder
		for _, r := range forbidden {
			b.WriteString("\n  " + r.String())
		}
		err = errors.Join(err, w.violation("", "ClusterRole rules",
			"add +kubebuilder:rbac markers for these requests and regenerate "+strings.Join(w.opts.ClusterRolePaths, ", "),
			"the API server refused (403) as the user bound to %s:%s", strings.Join(w.opts.ClusterRolePaths, ", "), b.String()))
	}
	return err
}
