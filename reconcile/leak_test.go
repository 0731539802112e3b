package reconcile_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
	ctrl "sigs.k8s.io/controller-runtime"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

// TestParallelGroupLeavesNoGoroutines runs Parallel groups whose members return, fail,
// panic and wait for the context, and checks that no goroutine of theirs outlives Run.
// The goroutines of the test control plane's clients, started before, are ignored.
func TestParallelGroupLeavesNoGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	step := func(name string, run reconcile.StepFunc[*Widget]) reconcile.Step[*Widget] {
		return reconcile.Step[*Widget]{Name: name, Condition: name + "Ready", Run: run}
	}
	for range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		p := mustPipeline(t, nil, reconcile.Parallel("Extras",
			step("Quick", func(_ context.Context, w *Widget) (ctrl.Result, error) {
				reconcile.MarkTrue(w, "QuickReady", "Done", "")
				return ctrl.Result{RequeueAfter: time.Second}, nil
			}),
			step("Fails", func(context.Context, *Widget) (ctrl.Result, error) {
				return ctrl.Result{}, crreconcile.TerminalError(errBoom)
			}),
			step("Panics", func(context.Context, *Widget) (ctrl.Result, error) { panic("member panicked") }),
			step("Waits", func(ctx context.Context, _ *Widget) (ctrl.Result, error) {
				<-ctx.Done()
				return ctrl.Result{}, ctx.Err()
			}),
			step("Cancels", func(context.Context, *Widget) (ctrl.Result, error) {
				cancel()
				return ctrl.Result{}, nil
			}),
		))
		_, err := p.Run(ctx, newWidget(1))
		if !errors.Is(err, errBoom) || !errors.Is(err, reconcile.ErrPanic) || !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v, want every member's error", err)
		}
		if reconcile.IsTerminal(err) {
			t.Errorf("Run = %v: terminal although only one member's error is", err)
		}
		cancel()
	}
}
