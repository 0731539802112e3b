package deployment

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
)

// DefaultTargetCPUUtilization is the average CPU utilization, in percent of the pods'
// CPU request, that [CPUAutoscaler] aims for when none is given: 80.
const DefaultTargetCPUUtilization int32 = 80

// HTTPPortName is the name of the container port and of the Service port that
// [HTTPService] targets.
const HTTPPortName = "http"

// HTTPService returns the Service in front of the pods that selector selects: one TCP
// port, port, named [HTTPPortName] and sent to the pods' container port of that name.
// The cluster IP is left to the API server. meta names it (name, namespace, labels);
// pass it to [EnsureService].
func HTTPService(meta metav1.ObjectMeta, selector map[string]string, port int32) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Selector: selector,
			Ports: []corev1.ServicePort{{
				Name: HTTPPortName, Port: port, TargetPort: intstr.FromString(HTTPPortName), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
}

// OneUnavailablePDB returns the PodDisruptionBudget that lets a drain evict one of the
// pods selector selects at a time (maxUnavailable 1), so that a single-replica
// workload does not block node maintenance while a larger one keeps all but one pod.
// meta names it; pass it to [EnsurePodDisruptionBudget].
func OneUnavailablePDB(meta metav1.ObjectMeta, selector map[string]string) *policyv1.PodDisruptionBudget {
	one := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: meta,
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: &one,
			Selector:       &metav1.LabelSelector{MatchLabels: selector},
		},
	}
}

// CPUAutoscaler returns the HorizontalPodAutoscaler (autoscaling/v2) that scales the
// Deployment named deploymentName, in meta's namespace, between minReplicas (nil: the
// API server's default, 1) and maxReplicas on the pods' average CPU utilization,
// aiming for targetCPU percent of their request (nil: [DefaultTargetCPUUtilization]).
// meta names it; pass it to [HPAFlow], and leave the Deployment's spec.replicas
// nil while it exists.
func CPUAutoscaler(meta metav1.ObjectMeta, deploymentName string, minReplicas *int32, maxReplicas int32,
	targetCPU *int32) *autoscalingv2.HorizontalPodAutoscaler {
	if targetCPU == nil {
		targetCPU = ptr.To(DefaultTargetCPUUtilization)
	}
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: meta,
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: deploymentName},
			MinReplicas:    minReplicas,
			MaxReplicas:    maxReplicas,
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{
					Name: corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{
						Type: autoscalingv2.UtilizationMetricType, AverageUtilization: targetCPU,
					},
				},
			}},
		},
	}
}

// CPUAutoscalerFor is [CPUAutoscaler] between the bounds of a CR's spec.autoscaling
// (commonv1.AutoscalingSpec); nil when spec is nil, so the HPA flow deletes the owner's
// autoscaler.
func CPUAutoscalerFor(meta metav1.ObjectMeta, deploymentName string, spec *commonv1.AutoscalingSpec) *autoscalingv2.HorizontalPodAutoscaler {
	if spec == nil {
		return nil
	}
	return CPUAutoscaler(meta, deploymentName, spec.MinReplicas, spec.MaxReplicas, spec.TargetCPUUtilization)
}
