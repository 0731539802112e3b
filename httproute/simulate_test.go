package httproute_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// gatewayController is the controllerName the simulated Gateway implementation writes.
const gatewayController gatewayv1.GatewayController = "example.com/gateway-controller"

// setAccepted stands in for a Gateway controller, which envtest does not run: it writes
// status.parents for every parentRef of the route, as the implementation behind
// gatewayController would, with Accepted=status (reason, message) observed at the
// route's current generation, through the status subresource.
func setAccepted(ctx context.Context, c client.Client, key client.ObjectKey, status metav1.ConditionStatus, reason, msg string) error {
	return setAcceptedAt(ctx, c, key, status, reason, msg, 0)
}

// setAcceptedAt is setAccepted with an explicit observedGeneration (0: the current one).
func setAcceptedAt(ctx context.Context, c client.Client, key client.ObjectKey, status metav1.ConditionStatus, reason, msg string, observed int64) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		route := &gatewayv1.HTTPRoute{}
		if err := c.Get(ctx, key, route); err != nil {
			return err
		}
		gen := observed
		if gen == 0 {
			gen = route.Generation
		}
		route.Status.Parents = nil
		for _, ref := range route.Spec.ParentRefs {
			route.Status.Parents = append(route.Status.Parents, gatewayv1.RouteParentStatus{
				ParentRef:      ref,
				ControllerName: gatewayController,
				Conditions: []metav1.Condition{{
					Type: string(gatewayv1.RouteConditionAccepted), Status: status, Reason: reason, Message: msg,
					ObservedGeneration: gen, LastTransitionTime: metav1.Now(),
				}},
			})
		}
		return c.Status().Update(ctx, route)
	})
	if err != nil {
		return fmt.Errorf("simulate Gateway verdict on HTTPRoute %s: %w", key, err)
	}
	return nil
}
