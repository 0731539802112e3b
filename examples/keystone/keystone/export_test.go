package keystone

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// StepNames are the named steps and groups of r's pipeline, in table order
// (reconcile.Pipeline.Steps).
func StepNames(r *Reconciler) []string { return r.Pipeline().Steps() }

// RunStep runs the step name of r's pipeline on k outside a pass
// (reconcile.Pipeline.RunStep), writing to target (whose Client the test may wrap),
// with the pass state of domainsSecret and domainFiles, and returns what the step
// returned. k's conditions are what the step set.
func RunStep(ctx context.Context, r *Reconciler, name string, target *multicluster.Target, k *v1alpha1.Keystone,
	domainsSecret string, domainFiles ...string) (ctrl.Result, error) {
	ctx = reconcile.WithState(ctx, &identitybackend.Projection{Secret: domainsSecret, Files: domainFiles})
	return r.Pipeline().RunStep(multicluster.WithTarget(ctx, target), name, k)
}

// RunStepWith is RunStep with the pass state s, the whole projection of the
// IdentityBackends row (its federation Secret included).
func RunStepWith(ctx context.Context, r *Reconciler, name string, target *multicluster.Target, k *v1alpha1.Keystone,
	s *identitybackend.Projection) (ctrl.Result, error) {
	return r.Pipeline().RunStep(multicluster.WithTarget(reconcile.WithState(ctx, s), target), name, k)
}
