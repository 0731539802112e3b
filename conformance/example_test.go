package conformance_test

import (
	"context"
	"testing"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/conformance"
)

// The lines an operator's author adds to a test package whose TestMain starts env with
// the operator's CRDs and Controllers: true: a Start that runs the operator's manager
// with the suite's logger, cache namespace and wrapped reconciler, and one call of Run.
// Here the operator is the package's toy; it needs a cluster, so the Example is only
// compiled.
func Example() {
	start := func(ctx context.Context, cfg *rest.Config, run conformance.RunOptions) error {
		mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: env.Scheme, Logger: run.Logger,
			Metrics: metricsserver.Options{BindAddress: "0"}, // two instances run at once
			Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{run.Namespace: {}}}})
		if err != nil {
			return err
		}
		r := &toyReconciler{c: apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{FieldManager: toyFieldManager}),
			raw: mgr.GetClient(), scheme: mgr.GetScheme(), recorder: mgr.GetEventRecorder(toyFieldManager)}
		if err := ctrl.NewControllerManagedBy(mgr).Named(run.Name).For(&Toy{}).Complete(run.Wrap(r)); err != nil {
			return err
		}
		return mgr.Start(ctx)
	}
	tooMany := newToy("too-many")
	tooMany.Spec.Replicas = new(int32(9))
	testConformance := func(t *testing.T) {
		conformance.Run(t, conformance.Options{
			Env:              env,
			FieldManager:     toyFieldManager,
			Start:            start,
			Samples:          []client.Object{newToy("sample")},
			Invalid:          []conformance.InvalidSample{{Object: tooMany, Field: "spec.replicas"}},
			MakeReady:        makeToyReady,
			ClusterRolePaths: []string{"testdata/rbac/role.yaml"},
			ExpectNoRequests: true,
		})
	}
	_ = testConformance
}
