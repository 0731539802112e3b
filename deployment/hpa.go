package deployment

import (
	"context"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/child"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// HPAFlow is the HPA flow under the rules of package [child]: desired nil deletes the
// owner's HorizontalPodAutoscaler (autoscaling/v2) at key (True,
// [ReasonHPANotRequired]); otherwise desired is applied (True, [ReasonHPAReady]).
// HPAReady has no False reason: errors come with the zero condition. Leave the
// Deployment's spec.replicas nil while an HPA is wanted (see [EnsureDeployment]).
func HPAFlow(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	key client.ObjectKey,
	desired *autoscalingv2.HorizontalPodAutoscaler,
) (reconcile.Outcome, error) {
	return child.Reconcile(ctx, c, scheme, owner, child.Optional[*autoscalingv2.HorizontalPodAutoscaler]{
		Key:         key,
		Desired:     desired,
		Type:        ConditionHPAReady,
		NotRequired: child.Reason{Reason: ReasonHPANotRequired, Message: "no HorizontalPodAutoscaler is requested"},
		Verdict: func(hpa *autoscalingv2.HorizontalPodAutoscaler) reconcile.Outcome {
			minReplicas := int32(1)
			if hpa.Spec.MinReplicas != nil {
				minReplicas = *hpa.Spec.MinReplicas
			}
			ref := hpa.Spec.ScaleTargetRef
			return reconcile.Done(reconcile.TrueCondition(ConditionHPAReady, ReasonHPAReady,
				fmt.Sprintf("HorizontalPodAutoscaler %s scales %s %s between %d and %d replicas",
					key, ref.Kind, ref.Name, minReplicas, hpa.Spec.MaxReplicas)))
		},
	})
}

// ReconcileHPA is the HPA flow answering its condition alone: [HPAFlow] is its
// reconcile.Outcome form. On failure the condition is the zero value and the error
// propagates; on return desired holds the server's copy.
func ReconcileHPA(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	key client.ObjectKey,
	desired *autoscalingv2.HorizontalPodAutoscaler,
) (metav1.Condition, error) {
	out, err := HPAFlow(ctx, c, scheme, owner, key, desired)
	return out.Condition, err
}
