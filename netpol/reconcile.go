package netpol

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// Condition type and reasons of the flow, spelled as in the Horizon condition table.
const (
	// ConditionType is the condition the flow reports.
	ConditionType = "NetworkPolicyReady"
	// ReasonReady (True): the desired NetworkPolicy is applied.
	ReasonReady = "NetworkPolicyReady"
	// ReasonNotRequired (True): no NetworkPolicy is wanted; none controlled by the owner
	// exists.
	ReasonNotRequired = "NetworkPolicyNotRequired"
)

// Sentinel errors for input [Reconcile] refuses before any API call.
var (
	// ErrEmptyIngress reports a desired NetworkPolicy that governs ingress but has no
	// ingress rules, which would deny all ingress; see the package documentation.
	ErrEmptyIngress = errors.New("spec.ingress is empty")
	// ErrKeyMismatch reports a desired NetworkPolicy whose name or namespace differs
	// from the key passed to [Reconcile].
	ErrKeyMismatch = errors.New("desired NetworkPolicy does not match the policy key")
)

// Reconcile runs the NetworkPolicy flow for the policy key; see the package
// documentation. desired is the wanted NetworkPolicy, or nil when the owner wants none.
// An empty name or namespace on desired is taken from key; a different one is refused
// with [ErrKeyMismatch]. On return desired holds the server's copy. A nil owner or
// scheme is refused before any API call, with an error wrapping apply.ErrNilOwner or
// apply.ErrNilScheme.
func Reconcile(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	key client.ObjectKey,
	desired *networkingv1.NetworkPolicy,
) (metav1.Condition, error) {
	if owner == nil || (reflect.ValueOf(owner).Kind() == reflect.Pointer && reflect.ValueOf(owner).IsNil()) {
		return metav1.Condition{}, fmt.Errorf("NetworkPolicy %s: %w", key, apply.ErrNilOwner)
	}
	if err := apply.CheckScheme(scheme); err != nil {
		return metav1.Condition{}, fmt.Errorf("NetworkPolicy %s: %w", key, err)
	}
	if desired == nil {
		msg, err := remove(ctx, c, owner, key)
		if err != nil {
			return metav1.Condition{}, err
		}
		return condition(metav1.ConditionTrue, ReasonNotRequired, msg), nil
	}
	if err := check(key, desired); err != nil {
		return metav1.Condition{}, err
	}
	if err := apply.EnsureObject(ctx, c, scheme, owner, desired, apply.FieldManager); err != nil {
		return metav1.Condition{}, fmt.Errorf("ensure NetworkPolicy: %w", err)
	}
	return condition(metav1.ConditionTrue, ReasonReady,
		fmt.Sprintf("NetworkPolicy %s applied with %d ingress rule(s)", key, len(desired.Spec.Ingress))), nil
}

// check validates desired against key, filling an empty name or namespace from key.
func check(key client.ObjectKey, desired *networkingv1.NetworkPolicy) error {
	if desired.Name == "" {
		desired.Name = key.Name
	}
	if desired.Namespace == "" {
		desired.Namespace = key.Namespace
	}
	if got := client.ObjectKeyFromObject(desired); got != key {
		return fmt.Errorf("%w: desired %s, key %s", ErrKeyMismatch, got, key)
	}
	if governsIngress(desired) && len(desired.Spec.Ingress) == 0 {
		return fmt.Errorf("NetworkPolicy %s: %w: a policy without ingress rules denies all ingress to the selected pods; "+
			"refusing to apply it, the existing NetworkPolicy is left unchanged (add at least one ingress rule, "+
			"or remove the network policy from the spec to delete it)", key, ErrEmptyIngress)
	}
	return nil
}

// governsIngress reports whether the policy restricts ingress: policyTypes empty (the
// API server then defaults it to Ingress, plus Egress when egress rules are listed) or
// containing Ingress.
func governsIngress(p *networkingv1.NetworkPolicy) bool {
	return len(p.Spec.PolicyTypes) == 0 || slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress)
}

// remove deletes the NetworkPolicy key if owner controls it and returns the condition
// message; a policy owner does not control is left in place, and the message says so.
func remove(ctx context.Context, c client.Client, owner client.Object, key client.ObjectKey) (string, error) {
	const notRequired = "no network policy configured: NetworkPolicy not required"
	foreign, err := apply.DeleteControlled(ctx, c, owner, &networkingv1.NetworkPolicy{}, key)
	if err != nil {
		return "", fmt.Errorf("remove NetworkPolicy %s: %w", key, err)
	}
	if foreign {
		return fmt.Sprintf("%s; NetworkPolicy %s is not controlled by %s and was left in place",
			notRequired, key, owner.GetName()), nil
	}
	return notRequired, nil
}

func condition(status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: ConditionType, Status: status, Reason: reason, Message: msg}
}
