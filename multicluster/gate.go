package multicluster

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// RetryInterval is the requeue while a CR's target cluster is unavailable, and of a
// converged pass on a target cluster ([Target.Recheck]): 15 s.
const RetryInterval = 15 * time.Second

// Gated is the answer of [TargetGate]: the outcome, and the cluster the steps write to
// when the gate passed.
type Gated struct {
	reconcile.Outcome
	// Target is the resolved cluster; nil when the gate did not pass.
	Target *Target
}

// TargetGate resolves ref for obj's namespace ([WithNamespace]) in the
// [reconcile.Outcome] shape: a resolved cluster passes with a zero outcome (the
// condition is left to the step that owns it); an unavailable one sets conditionType
// False with [TargetClusterUnavailable] and requeues after [RetryInterval]; any other
// resolver error is returned with a zero outcome.
func TargetGate(ctx context.Context, resolver Resolver, obj client.Object, conditionType string,
	ref *commonv1.TargetClusterRefSpec) (Gated, error) {
	if rv := reflect.ValueOf(obj); obj == nil || rv.Kind() == reflect.Pointer && rv.IsNil() {
		return Gated{}, fmt.Errorf("%w: TargetGate: object is nil", ErrInvalidOptions)
	}
	return gate(WithNamespace(ctx, obj.GetNamespace()), resolver, ref, conditionType, "TargetGate")
}

// GateTarget is [TargetGate] writing the condition into conds at generation, for the
// namespace ctx carries.
//
// Deprecated: use [TargetGate].
func GateTarget(
	ctx context.Context,
	resolver Resolver,
	ref *commonv1.TargetClusterRefSpec,
	conds *[]metav1.Condition,
	generation int64,
	conditionType string,
) (*Target, ctrl.Result, error) {
	if conds == nil && resolver != nil {
		return nil, ctrl.Result{}, fmt.Errorf("%w: GateTarget: conditions are nil", ErrInvalidOptions)
	}
	g, err := gate(ctx, resolver, ref, conditionType, "GateTarget")
	if g.Condition.Type != "" {
		g.Condition.ObservedGeneration = generation
		meta.SetStatusCondition(conds, g.Condition)
	}
	return g.Target, g.Result, err
}

// gate is the gate of TargetGate and GateTarget; name is the caller's, for errors.
func gate(ctx context.Context, resolver Resolver, ref *commonv1.TargetClusterRefSpec, conditionType, name string) (Gated, error) {
	switch {
	case resolver == nil:
		return Gated{}, fmt.Errorf("%w: %s: resolver is nil", ErrInvalidOptions, name)
	case conditionType == "":
		return Gated{}, fmt.Errorf("%w: %s: condition type is empty", ErrInvalidOptions, name)
	}
	target, err := resolve(ctx, resolver, ref)
	if err != nil {
		if !errors.Is(err, ErrTargetClusterUnavailable) {
			return Gated{}, fmt.Errorf("resolve target cluster: %w", err)
		}
		return Gated{Outcome: reconcile.Requeue(
			reconcile.FalseCondition(conditionType, TargetClusterUnavailable, err.Error()), RetryInterval)}, nil
	}
	return Gated{Target: target}, nil
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
