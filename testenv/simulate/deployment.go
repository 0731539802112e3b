package simulate

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MarkDeploymentAvailable stands in for the Deployment and ReplicaSet controllers, which
// envtest does not run: it writes the status a fully rolled-out Deployment has
// (observedGeneration = generation; replicas, updatedReplicas, readyReplicas and
// availableReplicas = spec.replicas, default 1; Available and Progressing True) through
// the status subresource. It retries on conflict and returns the updated Deployment.
func MarkDeploymentAvailable(ctx context.Context, c client.Client, key client.ObjectKey) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, key, d); err != nil {
			return err
		}
		replicas := int32(1)
		if d.Spec.Replicas != nil {
			replicas = *d.Spec.Replicas
		}
		now := metav1.Now()
		d.Status = appsv1.DeploymentStatus{
			ObservedGeneration: d.Generation,
			Replicas:           replicas,
			UpdatedReplicas:    replicas,
			ReadyReplicas:      replicas,
			AvailableReplicas:  replicas,
			Conditions: []appsv1.DeploymentCondition{
				{
					Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue,
					Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability.",
					LastUpdateTime: now, LastTransitionTime: now,
				},
				{
					Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue,
					Reason:         "NewReplicaSetAvailable",
					Message:        fmt.Sprintf("ReplicaSet %q has successfully progressed.", d.Name),
					LastUpdateTime: now, LastTransitionTime: now,
				},
			},
		}
		return c.Status().Update(ctx, d)
	})
	if err != nil {
		return nil, fmt.Errorf("simulate: mark Deployment %s available: %w", key, err)
	}
	return d, nil
}
