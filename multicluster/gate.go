package multicluster

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// GateTarget is the gate a reconciler runs ahead of every step: it resolves the CR's
// spec.targetClusterRef (ref) through resolver and returns the cluster the steps write
// to.
//
//   - A resolved cluster returns (target, zero result, nil) and leaves conds alone: the
//     step that owns conditionType sets it next.
//   - A cluster that is not registered or does not answer (an error wrapping
//     [ErrTargetClusterUnavailable]) sets conditionType False with reason
//     [TargetClusterUnavailable] and the resolver's error as message, and returns (nil,
//     RequeueAfter reconcile.TargetClusterRetryInterval, nil): the pass ends there and
//     nothing is written on any cluster.
//   - Any other resolver error returns (nil, zero result, err) without touching conds.
//
// A nil target means the caller returns the result and error as they are. A nil
// resolver or conds, or an empty conditionType, returns an error wrapping
// [ErrInvalidOptions]. The condition carries observedGeneration = generation;
// lastTransitionTime moves only when the status flips.
func GateTarget(
	ctx context.Context,
	resolver Resolver,
	ref *commonv1.TargetClusterRefSpec,
	conds *[]metav1.Condition,
	generation int64,
	conditionType string,
) (*Target, ctrl.Result, error) {
	switch {
	case resolver == nil:
		return nil, ctrl.Result{}, fmt.Errorf("%w: GateTarget: resolver is nil", ErrInvalidOptions)
	case conds == nil:
		return nil, ctrl.Result{}, fmt.Errorf("%w: GateTarget: conditions are nil", ErrInvalidOptions)
	case conditionType == "":
		return nil, ctrl.Result{}, fmt.Errorf("%w: GateTarget: condition type is empty", ErrInvalidOptions)
	}
	target, err := resolve(ctx, resolver, ref)
	if err != nil {
		if !errors.Is(err, ErrTargetClusterUnavailable) {
			return nil, ctrl.Result{}, fmt.Errorf("resolve target cluster: %w", err)
		}
		meta.SetStatusCondition(conds, metav1.Condition{
			Type:               conditionType,
			Status:             metav1.ConditionFalse,
			Reason:             TargetClusterUnavailable,
			Message:            err.Error(),
			ObservedGeneration: generation,
		})
		return nil, ctrl.Result{RequeueAfter: reconcile.TargetClusterRetryInterval}, nil
	}
	return target, ctrl.Result{}, nil
}

// resolve is resolver.Resolve with a resolver that answers neither a target nor an
// error turned into an error, so callers never dereference a nil target.
func resolve(ctx context.Context, resolver Resolver, ref *commonv1.TargetClusterRefSpec) (*Target, error) {
	target, err := resolver.Resolve(ctx, ref)
	if err == nil && target == nil {
		err = fmt.Errorf("resolver %T returned no target and no error", resolver)
	}
	return target, err
}
