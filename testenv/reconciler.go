package testenv

import (
	"context"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/multicluster"
)

// SetupReconciler is a reconciler that registers its controller and watches on a
// multicluster manager, as an operator's setup calls it.
type SetupReconciler interface {
	SetupWithManager(ctx context.Context, mgr mcmanager.Manager) error
}

// StartReconciler runs on e, as [Env.StartOperator] does with opts, an operator whose
// setup builds a reconciler with newReconciler on the operator's resolver and calls its
// SetupWithManager; it returns that reconciler and the operator. An error of
// newReconciler or of the setup fails the test.
func StartReconciler[R SetupReconciler](t testing.TB, e *Env, opts OperatorOptions,
	newReconciler func(*multicluster.ClusterResolver) (R, error)) (R, *Operator) {
	t.Helper()
	var rec R
	op := e.StartOperator(t, opts, func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
		var err error
		if rec, err = newReconciler(resolver); err != nil {
			return err
		}
		return rec.SetupWithManager(ctx, mgr)
	})
	return rec, op
}

// StepResolver returns the resolver a reconciler is built on, as an operator's main
// builds it under fieldManager (a multicluster manager on e with [Env.Scheme], no
// metrics server, controller names not validated), for a test that runs single steps:
// the manager is never started, so no controller runs and the resolver engages no
// target cluster. An error fails the test.
func (e *Env) StepResolver(t testing.TB, fieldManager string) *multicluster.ClusterResolver {
	t.Helper()
	mgr, err := multicluster.NewManager(rest.CopyConfig(e.Config), ctrl.Options{
		Scheme:     e.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}, multicluster.ManagerOptions{FieldManager: fieldManager})
	if err != nil {
		t.Fatal(err)
	}
	resolver, err := multicluster.NewResolver(context.Background(), mgr, multicluster.ResolverOptions{
		Applier: apply.ApplierOptions{FieldManager: fieldManager}})
	if err != nil {
		t.Fatal(err)
	}
	return resolver
}

// StepTarget is the management cluster as a pass writes to it, for a step run alone
// (reconcile.Pipeline.RunStep with multicluster.WithTarget): an Applier under
// fieldManager over c (the Env's client or a wrapper of it, such as a fault injector).
func StepTarget(c client.Client, fieldManager string) *multicluster.Target {
	return &multicluster.Target{Client: apply.NewApplier(c, apply.ApplierOptions{FieldManager: fieldManager})}
}

// StepReconciler is newReconciler on e's [Env.StepResolver] under fieldManager: the
// operator's reconciler built as its main builds it, with no manager running, for a
// test that runs single steps. An error fails the test.
func StepReconciler[R any](t testing.TB, e *Env, fieldManager string, newReconciler func(*multicluster.ClusterResolver) (R, error)) R {
	t.Helper()
	rec, err := newReconciler(e.StepResolver(t, fieldManager))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}
