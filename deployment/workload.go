package deployment

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Workload returns the Deployment of template's pods that selector selects, for
// [EnsureDeployment]: replicas of them, or nil (the autoscaler's count) when autoscaled,
// and spec.revisionHistoryLimit [DefaultRevisionHistoryLimit], so the old ReplicaSets
// keep no more old configuration alive than the prune retains. meta names it; the
// template's labels must include selector.
func Workload(meta metav1.ObjectMeta, selector map[string]string, replicas *int32, autoscaled bool,
	template corev1.PodTemplateSpec) *appsv1.Deployment {
	if autoscaled {
		replicas = nil
	}
	return &appsv1.Deployment{
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas:             replicas,
			RevisionHistoryLimit: ptr.To(DefaultRevisionHistoryLimit),
			Selector:             &metav1.LabelSelector{MatchLabels: selector},
			Template:             template,
		},
	}
}
