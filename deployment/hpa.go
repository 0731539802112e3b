package deployment

import (
	"context"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// ReconcileHPA is the HPA flow: it makes the HorizontalPodAutoscaler (autoscaling/v2)
// at key match desired and returns the [ConditionHPAReady] condition to set.
//
//   - desired nil: nothing is wanted. The HorizontalPodAutoscaler at key is deleted
//     when owner controls it (one controlled by someone else is left in place, and the
//     message says so). The condition is True with reason [ReasonHPANotRequired].
//   - desired set: it is applied with owner as controller (Server-Side Apply, a
//     converged HorizontalPodAutoscaler is not rewritten; an empty namespace or name is
//     filled from key, a different one is refused with [ErrKeyMismatch]). The
//     condition is True with reason [ReasonHPAReady]; on return desired holds the
//     server's copy.
//
// A wanted HorizontalPodAutoscaler of that name that owner does not control (made by
// kubectl or Helm, or controlled by another object) is refused with an error wrapping
// apply.ErrNotControlled that names its controller, and one being deleted with
// apply.ErrBeingDeleted; neither is written. One that is not wanted is deleted only when
// owner controls it and it is not already being deleted.
//
// HPAReady has no False reason: on failure ReconcileHPA returns the zero Condition
// (no Type) and the error, which the caller propagates, leaving the condition it has.
// The returned condition carries no observedGeneration; the caller stamps it when it
// sets the condition on its object. Leave the Deployment's spec.replicas nil when an
// HPA is wanted (see [EnsureDeployment]). A nil scheme is refused with
// apply.ErrNilScheme before any request, whether or not an HPA is wanted.
func ReconcileHPA(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	key client.ObjectKey,
	desired *autoscalingv2.HorizontalPodAutoscaler,
) (metav1.Condition, error) {
	desc := "HorizontalPodAutoscaler " + key.String()
	if key.Name == "" {
		return metav1.Condition{}, fmt.Errorf("reconcile HorizontalPodAutoscaler: %w: key has no name", apply.ErrMissingName)
	}
	if err := apply.CheckScheme(scheme); err != nil {
		return metav1.Condition{}, fmt.Errorf("reconcile %s: %w", desc, err)
	}
	if desired == nil {
		foreign, err := apply.DeleteControlled(ctx, c, owner, &autoscalingv2.HorizontalPodAutoscaler{}, key)
		if err != nil {
			return metav1.Condition{}, fmt.Errorf("reconcile %s: %w", desc, err)
		}
		msg := "no HorizontalPodAutoscaler is requested"
		if foreign {
			msg += "; " + desc + " is not controlled by this object and was left in place"
		}
		return trueCondition(ConditionHPAReady, ReasonHPANotRequired, msg), nil
	}

	if err := matchKey(desired, key); err != nil {
		return metav1.Condition{}, fmt.Errorf("reconcile %s: %w", desc, err)
	}
	if err := apply.EnsureObject(ctx, c, scheme, owner, desired, apply.FieldManager); err != nil {
		return metav1.Condition{}, fmt.Errorf("reconcile HorizontalPodAutoscaler: %w", err)
	}
	minReplicas := int32(1)
	if desired.Spec.MinReplicas != nil {
		minReplicas = *desired.Spec.MinReplicas
	}
	ref := desired.Spec.ScaleTargetRef
	return trueCondition(ConditionHPAReady, ReasonHPAReady,
		fmt.Sprintf("%s scales %s %s between %d and %d replicas", desc, ref.Kind, ref.Name, minReplicas, desired.Spec.MaxReplicas)), nil
}

// matchKey fills obj's empty namespace and name from key and refuses a different one.
func matchKey(obj client.Object, key client.ObjectKey) error {
	if obj.GetNamespace() == "" {
		obj.SetNamespace(key.Namespace)
	}
	if obj.GetName() == "" {
		obj.SetName(key.Name)
	}
	if got := client.ObjectKeyFromObject(obj); got != key {
		return fmt.Errorf("%w: desired object is %s", ErrKeyMismatch, got)
	}
	return nil
}

func trueCondition(condType, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: condType, Status: metav1.ConditionTrue, Reason: reason, Message: msg}
}

func falseCondition(condType, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: condType, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
}
