package httproute_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/c5c3/reconciler-sdk/httproute"
)

func TestAccepted(t *testing.T) {
	gw := gatewayv1.ParentReference{Name: "public", SectionName: new(gatewayv1.SectionName("https"))}
	gwDefaulted := gatewayv1.ParentReference{ // as the API server defaults it in status
		Group: new(gatewayv1.Group(gatewayv1.GroupName)), Kind: new(gatewayv1.Kind("Gateway")),
		Namespace: new(gatewayv1.Namespace("openstack")), Name: "public", SectionName: new(gatewayv1.SectionName("https")),
	}
	internal := gatewayv1.ParentReference{Name: "internal", Namespace: new(gatewayv1.Namespace("gateways"))}
	accepted := func(status metav1.ConditionStatus, observed int64) []metav1.Condition {
		return []metav1.Condition{
			{Type: string(gatewayv1.RouteConditionResolvedRefs), Status: metav1.ConditionTrue, Reason: "ResolvedRefs"},
			{Type: string(gatewayv1.RouteConditionAccepted), Status: status, Reason: "Because", Message: "the gateway says so",
				ObservedGeneration: observed},
		}
	}
	parent := func(ref gatewayv1.ParentReference, conds []metav1.Condition) gatewayv1.RouteParentStatus {
		return gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: "example.com/gw", Conditions: conds}
	}
	cases := map[string]struct {
		refs    []gatewayv1.ParentReference
		parents []gatewayv1.RouteParentStatus
		want    bool
		msg     string
	}{
		"no parentRefs": {want: false, msg: "has no parentRefs"},
		"no status":     {refs: []gatewayv1.ParentReference{gw}, msg: "waiting for Gateway openstack/public listener https"},
		"accepted, defaults filled in status": {refs: []gatewayv1.ParentReference{gw},
			parents: []gatewayv1.RouteParentStatus{parent(gwDefaulted, accepted(metav1.ConditionTrue, 3))},
			want:    true, msg: "accepted by Gateway openstack/public listener https"},
		"accepted without observedGeneration": {refs: []gatewayv1.ParentReference{gw},
			parents: []gatewayv1.RouteParentStatus{parent(gw, accepted(metav1.ConditionTrue, 0))}, want: true},
		"accepted for an older generation": {refs: []gatewayv1.ParentReference{gw},
			parents: []gatewayv1.RouteParentStatus{parent(gw, accepted(metav1.ConditionTrue, 2))},
			msg:     "accept generation 3 of HTTPRoute openstack/dashboard (last observed generation 2)"},
		"rejected": {refs: []gatewayv1.ParentReference{gw},
			parents: []gatewayv1.RouteParentStatus{parent(gw, accepted(metav1.ConditionFalse, 3))},
			msg:     "did not accept HTTPRoute openstack/dashboard: Because: the gateway says so"},
		"verdict for another listener": {refs: []gatewayv1.ParentReference{gw},
			parents: []gatewayv1.RouteParentStatus{parent(gatewayv1.ParentReference{Name: "public",
				SectionName: new(gatewayv1.SectionName("http"))}, accepted(metav1.ConditionTrue, 3))},
			msg: "waiting for"},
		"verdict for a same-named Gateway in another namespace": {refs: []gatewayv1.ParentReference{gw},
			parents: []gatewayv1.RouteParentStatus{parent(gatewayv1.ParentReference{Name: "public",
				Namespace: new(gatewayv1.Namespace("other")), SectionName: new(gatewayv1.SectionName("https"))},
				accepted(metav1.ConditionTrue, 3))},
			msg: "waiting for"},
		"verdict for another parent kind": {refs: []gatewayv1.ParentReference{gw},
			parents: []gatewayv1.RouteParentStatus{parent(gatewayv1.ParentReference{Name: "public",
				Kind: new(gatewayv1.Kind("ListenerSet")), SectionName: new(gatewayv1.SectionName("https"))},
				accepted(metav1.ConditionTrue, 3))},
			msg: "waiting for"},
		"one of two controllers accepts": {refs: []gatewayv1.ParentReference{gw},
			parents: []gatewayv1.RouteParentStatus{
				parent(gw, accepted(metav1.ConditionFalse, 3)), parent(gwDefaulted, accepted(metav1.ConditionTrue, 3))},
			want: true},
		"two parents, one pending": {refs: []gatewayv1.ParentReference{gw, internal},
			parents: []gatewayv1.RouteParentStatus{parent(gw, accepted(metav1.ConditionTrue, 3))},
			msg:     "waiting for Gateway gateways/internal to accept"},
		"two parents, both accepted": {refs: []gatewayv1.ParentReference{gw, internal},
			parents: []gatewayv1.RouteParentStatus{
				parent(internal, accepted(metav1.ConditionTrue, 3)), parent(gw, accepted(metav1.ConditionTrue, 3))},
			want: true, msg: "[Gateway openstack/public listener https Gateway gateways/internal]"},
		"no Accepted condition": {refs: []gatewayv1.ParentReference{gw},
			parents: []gatewayv1.RouteParentStatus{parent(gw, accepted(metav1.ConditionTrue, 3)[:1])},
			msg:     "waiting for"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			route := &gatewayv1.HTTPRoute{
				ObjectMeta: metav1.ObjectMeta{Name: "dashboard", Namespace: "openstack", Generation: 3},
				Spec:       gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: tc.refs}},
				Status:     gatewayv1.HTTPRouteStatus{RouteStatus: gatewayv1.RouteStatus{Parents: tc.parents}},
			}
			got, msg := httproute.Accepted(route)
			if got != tc.want {
				t.Errorf("Accepted = %v (%q), want %v", got, msg, tc.want)
			}
			if !strings.Contains(msg, tc.msg) {
				t.Errorf("message %q does not contain %q", msg, tc.msg)
			}
		})
	}
}
