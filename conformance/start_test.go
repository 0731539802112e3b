package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/conformance"
	"github.com/c5c3/reconciler-sdk/multicluster"
)

// StartOperator boots the operator on multicluster.RunOperator and hands the setup the
// run's options; ObserveReconciler points a reconciler's options at the run.
func TestStartOperatorObserves(t *testing.T) {
	wrapped := crreconcile.Func(func(context.Context, crreconcile.Request) (ctrl.Result, error) { return ctrl.Result{}, nil })
	run := conformance.RunOptions{Namespace: env.Namespace(t), Logger: logr.Discard(), Registerer: prometheus.NewRegistry(),
		Name: "start-test", Wrap: func(crreconcile.Reconciler) crreconcile.Reconciler { return wrapped }}
	got := make(chan multicluster.ReconcilerOptions[*Toy], 1)
	start := conformance.StartOperator("toy-operator", env.Scheme,
		func(_ context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver, r conformance.RunOptions) error {
			o := multicluster.ReconcilerOptions[*Toy]{FieldManager: "toy-operator"}
			if resolver == nil || r.Name != run.Name {
				t.Errorf("setup got resolver %v and run %q, want a resolver and the run's options", resolver, r.Name)
			}
			err := conformance.ObserveReconciler(r, mgr, "toy_start", &o)
			got <- o
			return err
		})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- start(ctx, env.Config, run) }()
	select {
	case o := <-got:
		if o.Metrics == nil || o.Recorder == nil || o.Wrap == nil || o.Wrap(nil) == nil {
			t.Errorf("options after ObserveReconciler: Metrics %v, Recorder %v, Wrap set %v; want all of the run", o.Metrics, o.Recorder, o.Wrap != nil)
		}
	case err := <-done:
		t.Fatalf("the operator ended before its setup: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the setup did not run within 60s")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("RunOperator: %v", err)
	}
}
