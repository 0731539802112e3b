package multicluster

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// OnTarget is the preamble of a pass for a CR whose children may land on a target
// cluster; call it from the pass function of reconcile.RunPass with the steps as run:
//
//   - a CR being deleted: cleanup.Finalize sweeps the target clusters its finalizers
//     name (bounded in time) and removes them; run is not called;
//   - otherwise TargetGate resolves ref for obj's namespace ([WithNamespace]): an
//     unavailable cluster, or one obj's namespace may not use, sets conditionType False
//     with reason TargetClusterUnavailable and ends the pass with a requeue, nothing
//     written anywhere;
//   - cleanup.Track records the cluster (a finalizer per target cluster, none on the
//     management cluster) and sweeps the one the CR left (the management cluster too,
//     when the CR moves from it to a target cluster);
//   - run gets a context carrying the Target (TargetFrom), so every step writes to that
//     cluster through TargetFrom(ctx).Client;
//   - a pass that converged on a target cluster requeues after Target.Recheck, so an API
//     server that stops answering is noticed without an event.
//
// c is the management cluster's client (the CR's own). The result of run is returned as
// it is otherwise. A nil cleanup or run, or an empty conditionType, returns an error
// wrapping ErrInvalidOptions.
func OnTarget[T reconcile.Object](ctx context.Context, c client.Client, cleanup *Cleanup, obj T,
	ref *commonv1.TargetClusterRefSpec, conditionType string, run reconcile.StepFunc[T]) (ctrl.Result, error) {
	if cleanup == nil || run == nil || conditionType == "" {
		return ctrl.Result{}, fmt.Errorf("%w: OnTarget needs a Cleanup, a step function and a condition type", ErrInvalidOptions)
	}
	ctx = WithNamespace(ctx, obj.GetNamespace())
	if obj.GetDeletionTimestamp() != nil {
		return cleanup.Finalize(ctx, c, obj, ref)
	}
	g, err := TargetGate(ctx, cleanup.resolver, obj, conditionType, ref)
	if g.Target == nil {
		return reconcile.Settle(obj, g.Outcome, err)
	}
	target := g.Target
	if err := cleanup.Track(ctx, c, obj, target); err != nil {
		return ctrl.Result{}, err
	}
	res, err := run(WithTarget(ctx, target), obj)
	if err == nil && res.IsZero() {
		return target.Recheck(), nil
	}
	return res, err
}
