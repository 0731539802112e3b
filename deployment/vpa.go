package deployment

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/child"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// VPAGroupVersionKind is the kind the VPA flow manages and probes for:
// autoscaling.k8s.io/v1 VerticalPodAutoscaler.
var VPAGroupVersionKind = vpav1.SchemeGroupVersion.WithKind("VerticalPodAutoscaler")

// VPAFlow is the VPA flow, the set form of package [child]: the VerticalPodAutoscalers
// owner controls in its namespace become exactly desired. True, [ReasonVPAReady] (or
// [ReasonVPANotRequired] when desired is empty); False [ReasonVPANotInstalled] without
// error when the cluster does not serve the kind; False [ReasonCapabilityProbeFailed] or
// [ReasonVPAError] with the error.
func VPAFlow(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	desired []*vpav1.VerticalPodAutoscaler,
) (reconcile.Outcome, error) {
	gvk := VPAGroupVersionKind
	return child.ReconcileSet(ctx, c, scheme, owner, child.Set[*vpav1.VerticalPodAutoscaler]{
		Desired:     desired,
		Type:        ConditionVPAReady,
		Ready:       ReasonVPAReady,
		NotRequired: child.Reason{Reason: ReasonVPANotRequired, Message: "no VerticalPodAutoscaler is requested"},
		Failed:      ReasonVPAError,
		NotServed: &child.Reason{Reason: ReasonVPANotInstalled, Message: fmt.Sprintf(
			"the cluster does not serve %s/%s %s; install the VerticalPodAutoscaler CRDs to honour the request for %s",
			gvk.Group, gvk.Version, gvk.Kind, child.Names(desired))},
	})
}

// ReconcileVPA is [VPAFlow] answering its condition alone.
//
// Deprecated: use VPAFlow.
func ReconcileVPA(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	desired []*vpav1.VerticalPodAutoscaler,
) (metav1.Condition, error) {
	out, err := VPAFlow(ctx, c, scheme, owner, desired)
	return out.Condition, err
}
