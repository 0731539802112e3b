package conformance

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// StartFunc is the type of Options.Start: it runs one instance of the operator until
// ctx ends.
type StartFunc = func(ctx context.Context, cfg *rest.Config, run RunOptions) error

// OperatorSetup registers an operator's controllers under the suite, as its main's
// multicluster.OperatorSetup does, with the run's options at hand.
type OperatorSetup func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver, run RunOptions) error

// StartOperator returns the Options.Start of an operator that boots on
// multicluster.RunOperator: each instance runs with [RunOptions.OperatorOptions] of
// fieldManager and scheme, and setup registers its controllers.
func StartOperator(fieldManager string, scheme *runtime.Scheme, setup OperatorSetup) StartFunc {
	return func(ctx context.Context, cfg *rest.Config, run RunOptions) error {
		return multicluster.RunOperator(ctx, cfg, run.OperatorOptions(fieldManager, scheme),
			func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
				return setup(ctx, mgr, resolver, run)
			})
	}
}

// ObserveReconciler points o at the suite: Metrics under metricsPrefix on the run's
// Registerer ([RunOptions.Metrics]), Recorder the manager's under o.FieldManager, and
// Wrap the run's, which the CRReconciler's Complete applies.
func ObserveReconciler[T reconcile.Object](run RunOptions, mgr mcmanager.Manager, metricsPrefix string, o *multicluster.ReconcilerOptions[T]) error {
	metrics, err := run.Metrics(metricsPrefix)
	if err != nil {
		return err
	}
	o.Metrics, o.Recorder, o.Wrap = metrics, mgr.GetLocalManager().GetEventRecorder(o.FieldManager), run.Wrap
	return nil
}
