package netpol

import (
	"context"
	"errors"
	"fmt"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/child"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// Condition type and reasons of the flow.
const (
	// ConditionType is the condition the flow reports.
	ConditionType = "NetworkPolicyReady"
	// ReasonReady (True): the desired NetworkPolicy is applied.
	ReasonReady = "NetworkPolicyReady"
	// ReasonNotRequired (True): no NetworkPolicy is wanted; none controlled by the owner
	// exists.
	ReasonNotRequired = "NetworkPolicyNotRequired"
)

// Sentinel errors for input [Flow] refuses before any API call.
var (
	// ErrEmptyIngress reports a desired NetworkPolicy that governs ingress but has no
	// ingress rules, which would deny all ingress; see the package documentation.
	ErrEmptyIngress = errors.New("spec.ingress is empty")
	// ErrKeyMismatch is [child.ErrKeyMismatch]: a desired NetworkPolicy whose name or
	// namespace differs from the key.
	ErrKeyMismatch = child.ErrKeyMismatch
)

// Flow runs the NetworkPolicy flow for the policy key: desired nil deletes the owner's
// policy (True, [ReasonNotRequired]); otherwise desired is refused when its ingress list
// is empty ([ErrEmptyIngress]) or applied (True, [ReasonReady]). The rules of package
// [child] hold; errors come with the zero condition.
func Flow(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	key client.ObjectKey,
	desired *networkingv1.NetworkPolicy,
) (reconcile.Outcome, error) {
	return child.Reconcile(ctx, c, scheme, owner, child.Optional[*networkingv1.NetworkPolicy]{
		Key:         key,
		Desired:     desired,
		Type:        ConditionType,
		NotRequired: child.Reason{Reason: ReasonNotRequired, Message: "no network policy configured: NetworkPolicy not required"},
		Check:       checkIngress,
		Verdict: func(applied *networkingv1.NetworkPolicy) reconcile.Outcome {
			return reconcile.Done(reconcile.TrueCondition(ConditionType, ReasonReady,
				fmt.Sprintf("NetworkPolicy %s applied with %d ingress rule(s)", key, len(applied.Spec.Ingress))))
		},
	})
}

// Reconcile is [Flow] answering its condition alone.
//
// Deprecated: use Flow.
func Reconcile(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	key client.ObjectKey,
	desired *networkingv1.NetworkPolicy,
) (metav1.Condition, error) {
	out, err := Flow(ctx, c, scheme, owner, key, desired)
	return out.Condition, err
}

// checkIngress refuses a policy that governs ingress without listing ingress rules.
func checkIngress(p *networkingv1.NetworkPolicy) error {
	if governsIngress(p) && len(p.Spec.Ingress) == 0 {
		return fmt.Errorf("%w: a policy without ingress rules denies all ingress to the selected pods; "+
			"refusing to apply it, the existing NetworkPolicy is left unchanged (add at least one ingress rule, "+
			"or remove the network policy from the spec to delete it)", ErrEmptyIngress)
	}
	return nil
}

// governsIngress reports whether the policy restricts ingress: policyTypes empty (the
// API server then defaults it to Ingress, plus Egress when egress rules are listed) or
// containing Ingress.
func governsIngress(p *networkingv1.NetworkPolicy) bool {
	return len(p.Spec.PolicyTypes) == 0 || slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress)
}
