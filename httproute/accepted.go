package httproute

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Accepted reports whether every parentRef of route has been accepted by its Gateway
// for the route's current generation, and a message for the condition.
//
// A parentRef counts as accepted when an entry of status.parents refers to the same
// parent (group and kind default to gateway.networking.k8s.io/Gateway, the namespace to
// the route's; sectionName and port must be equal) and carries Accepted=True with an
// observedGeneration not older than metadata.generation (0 is taken at face value).
// When several controllers report on one parent, one acceptance is enough. The message
// names the first parent that did not accept, with the Gateway's reason and message if
// it rejected the route. A route without parentRefs is never accepted.
func Accepted(route *gatewayv1.HTTPRoute) (bool, string) {
	key := route.Namespace + "/" + route.Name
	if len(route.Spec.ParentRefs) == 0 {
		return false, fmt.Sprintf("HTTPRoute %s has no parentRefs", key)
	}
	var names []string
	for _, ref := range route.Spec.ParentRefs {
		accepted, why := parentAccepted(route, ref)
		if !accepted {
			return false, why
		}
		names = append(names, parentName(route, ref))
	}
	if len(names) == 1 {
		return true, fmt.Sprintf("HTTPRoute %s accepted by %s", key, names[0])
	}
	return true, fmt.Sprintf("HTTPRoute %s accepted by %v", key, names)
}

func parentAccepted(route *gatewayv1.HTTPRoute, ref gatewayv1.ParentReference) (bool, string) {
	key := route.Namespace + "/" + route.Name
	parent := parentName(route, ref)
	var rejected, stale *metav1.Condition
	for i := range route.Status.Parents {
		ps := &route.Status.Parents[i]
		if !sameParent(route.Namespace, ps.ParentRef, ref) {
			continue
		}
		for j := range ps.Conditions {
			cond := &ps.Conditions[j]
			if cond.Type != string(gatewayv1.RouteConditionAccepted) {
				continue
			}
			switch {
			case cond.ObservedGeneration != 0 && cond.ObservedGeneration < route.Generation:
				stale = cond
			case cond.Status == metav1.ConditionTrue:
				return true, ""
			default:
				rejected = cond
			}
		}
	}
	switch {
	case rejected != nil:
		return false, fmt.Sprintf("%s did not accept HTTPRoute %s: %s: %s", parent, key, rejected.Reason, rejected.Message)
	case stale != nil:
		return false, fmt.Sprintf("waiting for %s to accept generation %d of HTTPRoute %s (last observed generation %d)",
			parent, route.Generation, key, stale.ObservedGeneration)
	default:
		return false, fmt.Sprintf("waiting for %s to accept HTTPRoute %s", parent, key)
	}
}

// sameParent compares a status parentRef with a spec parentRef after defaulting.
func sameParent(routeNamespace string, a, b gatewayv1.ParentReference) bool {
	return a.Name == b.Name &&
		group(a) == group(b) && kind(a) == kind(b) &&
		namespace(routeNamespace, a) == namespace(routeNamespace, b) &&
		deref(a.SectionName) == deref(b.SectionName) &&
		deref(a.Port) == deref(b.Port)
}

func parentName(route *gatewayv1.HTTPRoute, ref gatewayv1.ParentReference) string {
	s := fmt.Sprintf("%s %s/%s", kind(ref), namespace(route.Namespace, ref), ref.Name)
	if ref.SectionName != nil {
		s += " listener " + string(*ref.SectionName)
	}
	return s
}

func group(r gatewayv1.ParentReference) gatewayv1.Group {
	if r.Group == nil {
		return gatewayv1.GroupName
	}
	return *r.Group
}

func kind(r gatewayv1.ParentReference) gatewayv1.Kind {
	if r.Kind == nil {
		return "Gateway"
	}
	return *r.Kind
}

func namespace(routeNamespace string, r gatewayv1.ParentReference) gatewayv1.Namespace {
	if r.Namespace == nil || *r.Namespace == "" {
		return gatewayv1.Namespace(routeNamespace)
	}
	return *r.Namespace
}

func deref[T comparable](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
