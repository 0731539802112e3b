package keystone

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// StepNames are the rows of the step table in pipeline order, as RunStep names them;
// "RotationAccess" is the unnamed row before the Keys group, "prune" the unnamed row
// after the Deployment.
var StepNames = []string{"Secrets", "DatabaseTLS", "Config", "RotationAccess", "Database", "PolicyValidation", "Deployment", "prune",
	"HTTPRoute", "HealthCheck", "HPA", "Bootstrap", "TrustFlush", "PasswordRotation"}

// RunStep runs the row name of r's step table on k outside a pass, writing to target
// (whose Client the test may wrap), with the pass state of domainsSecret and
// domainFiles, and returns what the step returned. k's conditions are what the step
// set.
func RunStep(ctx context.Context, r *Reconciler, name string, target *multicluster.Target, k *v1alpha1.Keystone,
	domainsSecret string, domainFiles ...string) (ctrl.Result, error) {
	steps := map[string]reconcile.StepFunc[*v1alpha1.Keystone]{
		"Secrets": r.reconcileSecrets, "DatabaseTLS": r.reconcileDatabaseTLS, "Config": r.reconcileConfig,
		"RotationAccess": r.reconcileRotationAccess,
		"Database":       r.reconcileDatabase, "PolicyValidation": r.reconcilePolicyValidation,
		"Deployment": r.reconcileDeployment, "prune": r.prune, "HTTPRoute": r.reconcileHTTPRoute,
		"HealthCheck": r.reconcileHealthCheck, "HPA": r.reconcileHPA, "Bootstrap": r.reconcileBootstrap,
		"TrustFlush": r.reconcileTrustFlush, "PasswordRotation": r.reconcilePasswordRotation,
	}
	step, ok := steps[name]
	if !ok {
		return ctrl.Result{}, fmt.Errorf("no step %q in the Keystone step table", name)
	}
	ctx = reconcile.WithState(ctx, &identitybackend.Projection{Secret: domainsSecret, Files: domainFiles})
	return step(multicluster.WithTarget(ctx, target), k)
}
