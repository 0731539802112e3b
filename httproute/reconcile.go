package httproute

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/capability"
)

// Condition type and reasons of the flow, spelled as in the Horizon condition table.
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
// route: 10 s, the polling interval for a Gateway's verdict.
const AcceptancePollInterval = 10 * time.Second

// GVK is the kind the flow applies and probes for.
var GVK = schema.GroupVersionKind{Group: gatewayv1.GroupName, Version: "v1", Kind: "HTTPRoute"}

// ErrKeyMismatch reports a desired HTTPRoute whose name or namespace differs from the
// key passed to [Reconcile].
var ErrKeyMismatch = errors.New("desired HTTPRoute does not match the route key")

// Reconcile runs the HTTPRoute flow for the route key on the cluster behind c; see the
// package documentation for the outcomes. desired is the wanted HTTPRoute (typically
// from [Build]), or nil when the owner wants none. An empty name or namespace on
// desired is taken from key; a different one is refused with [ErrKeyMismatch].
//
// On return desired holds the server's copy of the route, status included. A nil owner
// or scheme is refused before any API call, with an error wrapping apply.ErrNilOwner or
// apply.ErrNilScheme.
func Reconcile(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	key client.ObjectKey,
	desired *gatewayv1.HTTPRoute,
) (metav1.Condition, ctrl.Result, error) {
	if owner == nil || (reflect.ValueOf(owner).Kind() == reflect.Pointer && reflect.ValueOf(owner).IsNil()) {
		return metav1.Condition{}, ctrl.Result{}, fmt.Errorf("HTTPRoute %s: %w", key, apply.ErrNilOwner)
	}
	if err := apply.CheckScheme(scheme); err != nil {
		return metav1.Condition{}, ctrl.Result{}, fmt.Errorf("HTTPRoute %s: %w", key, err)
	}
	if desired == nil {
		msg, err := remove(ctx, c, owner, key)
		if err != nil {
			return metav1.Condition{}, ctrl.Result{}, err
		}
		return condition(metav1.ConditionTrue, ReasonNotRequired, msg), ctrl.Result{}, nil
	}
	if err := matchKey(key, desired); err != nil {
		return metav1.Condition{}, ctrl.Result{}, err
	}

	served, err := capability.IsKindServed(c.RESTMapper(), GVK)
	if err != nil {
		return condition(metav1.ConditionFalse, ReasonCapabilityProbeFailed,
				fmt.Sprintf("cannot tell whether the cluster serves %s: discovery failed", GVK.GroupKind())),
			ctrl.Result{}, fmt.Errorf("HTTPRoute %s: %w", key, err)
	}
	if !served {
		return condition(metav1.ConditionFalse, ReasonGatewayAPINotInstalled,
			fmt.Sprintf("a gateway is configured but the cluster does not serve %s %s: install the Gateway API CRDs",
				GVK.GroupVersion(), GVK.Kind)), ctrl.Result{}, nil
	}

	if err := apply.EnsureObject(ctx, c, scheme, owner, desired, apply.FieldManager); err != nil {
		return metav1.Condition{}, ctrl.Result{}, fmt.Errorf("ensure HTTPRoute: %w", err)
	}
	accepted, msg := Accepted(desired)
	if !accepted {
		return condition(metav1.ConditionFalse, ReasonNotAccepted, msg),
			ctrl.Result{RequeueAfter: AcceptancePollInterval}, nil
	}
	return condition(metav1.ConditionTrue, ReasonAccepted, msg), ctrl.Result{}, nil
}

func matchKey(key client.ObjectKey, desired *gatewayv1.HTTPRoute) error {
	if desired.Name == "" {
		desired.Name = key.Name
	}
	if desired.Namespace == "" {
		desired.Namespace = key.Namespace
	}
	if got := client.ObjectKeyFromObject(desired); got != key {
		return fmt.Errorf("%w: desired %s, key %s", ErrKeyMismatch, got, key)
	}
	return nil
}

// remove deletes the HTTPRoute key if owner controls it and returns the condition
// message. A route another controller (or nobody) controls is left in place, and the
// message says so. A cluster without the HTTPRoute kind has no route to delete.
func remove(ctx context.Context, c client.Client, owner client.Object, key client.ObjectKey) (string, error) {
	const notRequired = "no gateway configured: HTTPRoute not required"
	foreign, err := apply.DeleteControlled(ctx, c, owner, &gatewayv1.HTTPRoute{}, key)
	if err != nil {
		return "", fmt.Errorf("remove HTTPRoute %s: %w", key, err)
	}
	if foreign {
		return fmt.Sprintf("%s; HTTPRoute %s is not controlled by %s and was left in place",
			notRequired, key, owner.GetName()), nil
	}
	return notRequired, nil
}

func condition(status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: ConditionType, Status: status, Reason: reason, Message: msg}
}

// ReconcileSpec is [Reconcile] for a CR that embeds the gateway block [Spec] (a nil
// spec means "no HTTPRoute"): it builds the route key from spec and backend with
// [Build], labels it with labels, and runs the flow. A spec [Build] refuses returns the
// zero Condition (no Type, so reconcile.ApplyCondition leaves the condition as it is)
// and the error wrapping [ErrInvalidSpec], before any request. The HTTPRoute row of an
// operator is then:
//
//	cond, res, err := httproute.ReconcileSpec(ctx, c, scheme, cr, key, cr.Spec.Gateway, backend, labels)
//	reconcile.ApplyCondition(cr, cond)
//	return res, err
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
	var desired *gatewayv1.HTTPRoute
	if spec != nil {
		var err error
		if desired, err = Build(key, *spec, backend); err != nil {
			return metav1.Condition{}, ctrl.Result{}, err
		}
		desired.Labels = labels
	}
	return Reconcile(ctx, c, scheme, owner, key, desired)
}
