package httproute

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/c5c3/reconciler-sdk/capability"
	"github.com/c5c3/reconciler-sdk/child"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// Condition type and reasons of the flow.
const (
	// ConditionType is the condition the flow reports.
	ConditionType = "HTTPRouteReady"
	// ReasonAccepted (True): every parent Gateway accepted the route for its current
	// generation.
	ReasonAccepted = "HTTPRouteAccepted"
	// ReasonNotRequired (True): no route is wanted; none controlled by the owner exists.
	ReasonNotRequired = "HTTPRouteNotRequired"
	// ReasonNotAccepted (False): the route is applied but a parent Gateway has not
	// accepted it (yet, or it rejected it); the flow requeues after
	// [AcceptancePollInterval].
	ReasonNotAccepted = "HTTPRouteNotAccepted"
	// ReasonGatewayAPINotInstalled (False): a route is wanted but the cluster does not
	// serve the HTTPRoute kind.
	ReasonGatewayAPINotInstalled = "GatewayAPINotInstalled"
	// ReasonCapabilityProbeFailed (False): whether the cluster serves HTTPRoute could
	// not be determined because discovery failed; the error is returned too.
	ReasonCapabilityProbeFailed = capability.ReasonCapabilityProbeFailed
)

// AcceptancePollInterval is the requeue while a parent Gateway has not accepted the
// route: 10 s.
const AcceptancePollInterval = 10 * time.Second

// GVK is the kind the flow applies and probes for.
var GVK = schema.GroupVersionKind{Group: gatewayv1.GroupName, Version: "v1", Kind: "HTTPRoute"}

// ErrKeyMismatch is [child.ErrKeyMismatch]: a desired HTTPRoute whose name or namespace
// differs from the route key.
var ErrKeyMismatch = child.ErrKeyMismatch

// Flow runs the HTTPRoute flow for the route key on the cluster behind c, under the
// rules of package [child]; see the package documentation for its outcomes. desired is
// the wanted route (typically from [Build]), nil when the owner wants none; on return it
// holds the server's copy, status included.
func Flow(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	key client.ObjectKey,
	desired *gatewayv1.HTTPRoute,
) (reconcile.Outcome, error) {
	return child.Reconcile(ctx, c, scheme, owner, child.Optional[*gatewayv1.HTTPRoute]{
		Key:         key,
		Desired:     desired,
		Type:        ConditionType,
		NotRequired: child.Reason{Reason: ReasonNotRequired, Message: "no gateway configured: HTTPRoute not required"},
		NotServed: &child.Reason{Reason: ReasonGatewayAPINotInstalled, Message: fmt.Sprintf(
			"a gateway is configured but the cluster does not serve %s %s: install the Gateway API CRDs", GVK.GroupVersion(), GVK.Kind)},
		Verdict: verdict,
	})
}

// verdict mirrors the Gateways' verdict on the applied route.
func verdict(route *gatewayv1.HTTPRoute) reconcile.Outcome {
	accepted, msg := Accepted(route)
	if !accepted {
		return reconcile.Requeue(reconcile.FalseCondition(ConditionType, ReasonNotAccepted, msg), AcceptancePollInterval)
	}
	return reconcile.Done(reconcile.TrueCondition(ConditionType, ReasonAccepted, msg))
}

// SpecFlow is [Flow] for a custom resource that embeds the gateway block [Spec] (nil:
// no route): it builds the route key from spec and backend with [Build], labels it with
// labels, and runs the flow. A spec Build refuses is an error wrapping [ErrInvalidSpec]
// with the zero condition, before any request.
//
//	out, err := httproute.SpecFlow(ctx, c, scheme, cr, key, cr.Spec.Gateway, backend, labels)
//	return reconcile.Settle(cr, out, err)
func SpecFlow(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	key client.ObjectKey,
	spec *Spec,
	backend Backend,
	labels map[string]string,
) (reconcile.Outcome, error) {
	var desired *gatewayv1.HTTPRoute
	if spec != nil {
		var err error
		if desired, err = Build(key, *spec, backend); err != nil {
			return reconcile.Outcome{}, err
		}
		desired.Labels = labels
	}
	return Flow(ctx, c, scheme, owner, key, desired)
}

// Reconcile is [Flow] answering its condition and result apart.
//
// Deprecated: use Flow.
func Reconcile(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	key client.ObjectKey,
	desired *gatewayv1.HTTPRoute,
) (metav1.Condition, ctrl.Result, error) {
	out, err := Flow(ctx, c, scheme, owner, key, desired)
	return out.Condition, out.Result, err
}

// ReconcileSpec is [SpecFlow] answering its condition and result apart.
//
// Deprecated: use SpecFlow.
func ReconcileSpec(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	key client.ObjectKey,
	spec *Spec,
	backend Backend,
	labels map[string]string,
) (metav1.Condition, ctrl.Result, error) {
	out, err := SpecFlow(ctx, c, scheme, owner, key, spec, backend, labels)
	return out.Condition, out.Result, err
}
