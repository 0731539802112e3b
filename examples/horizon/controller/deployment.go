package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/settings"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// reconcileDeployment is the Deployment row: the uWSGI Deployment, its Service and its
// PodDisruptionBudget; status.endpoint names the Service once the Deployment is ready.
func (r *Reconciler) reconcileDeployment(ctx context.Context, h *v1alpha1.Horizon) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	c, scheme := target.Client, target.Client.Scheme()
	failed := func(err error) (reconcile.Outcome, error) {
		return reconcile.Done(reconcile.FalseCondition(ConditionDeploymentReady, ReasonDeploymentError, err.Error())), err
	}
	// The Service and the PDB first: the Service name resolves while the pods roll out.
	if err := deployment.EnsureService(ctx, c, scheme, h, desiredService(h)); err != nil {
		return failed(err)
	}
	if err := deployment.EnsurePodDisruptionBudget(ctx, c, scheme, h, desiredPDB(h)); err != nil {
		return failed(err)
	}
	ready, err := deployment.EnsureDeployment(ctx, c, scheme, h, desiredDeployment(h, reconcile.StateFrom[passState](ctx).secretKeyHash))
	if err != nil {
		return failed(err)
	}
	if !ready {
		return reconcile.Requeue(reconcile.FalseCondition(ConditionDeploymentReady, ReasonWaitingForDeployment,
			fmt.Sprintf("waiting for Deployment %s/%s to roll out", h.Namespace, h.Name)), deployment.PollInterval), nil
	}
	h.Status.Endpoint = Endpoint(h)
	return reconcile.Done(reconcile.TrueCondition(ConditionDeploymentReady, ReasonDeploymentReady,
		fmt.Sprintf("Deployment %s/%s is available", h.Namespace, h.Name))), nil
}

// Endpoint is the cluster-local URL of a Horizon's Service, published as
// status.endpoint.
func Endpoint(h *v1alpha1.Horizon) string {
	return fmt.Sprintf("http://%s.%s.svc:%d", h.Name, h.Namespace, ServicePort)
}

// labels are the labels of a Horizon's children; selectorLabels select its pods.
func labels(h *v1alpha1.Horizon) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":      "horizon",
		"app.kubernetes.io/instance":  h.Name,
		"app.kubernetes.io/component": "dashboard",
	}
}

func selectorLabels(h *v1alpha1.Horizon) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "horizon", "app.kubernetes.io/instance": h.Name}
}

// desiredDeployment is the uWSGI Deployment: the image of spec.image, the ConfigMap of
// status.configMap mounted as local_settings.py, the SECRET_KEY from the synced Secret
// in HORIZON_SECRET_KEY, probes on the login page, and keyHash on the pod template so
// a new key rolls the pods. With spec.autoscaling the replica count is the HPA's. It
// keeps deployment.DefaultRevisionHistoryLimit old ReplicaSets, so the ConfigMaps they
// mount are the ones the prune retains anyway.
func desiredDeployment(h *v1alpha1.Horizon, keyHash string) *appsv1.Deployment {
	readiness, startup := deployment.HTTPProbes(LoginPath)
	podLabels := labels(h)
	return deployment.Workload(metav1.ObjectMeta{Name: h.Name, Namespace: h.Namespace, Labels: labels(h)}, selectorLabels(h),
		h.Spec.Replicas, h.Spec.Autoscaling != nil, corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{
				Labels:      podLabels,
				Annotations: map[string]string{SecretKeyHashAnnotation: keyHash},
			},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{
					Name:  "horizon",
					Image: h.Spec.Image,
					Ports: []corev1.ContainerPort{{Name: deployment.HTTPPortName, ContainerPort: ServicePort}},
					Env: []corev1.EnvVar{{
						Name: settings.SecretKeyEnv,
						ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
							LocalObjectReference: corev1.LocalObjectReference{Name: SecretKeyName(h)},
							Key:                  SecretKeyDataKey,
						}},
					}},
					VolumeMounts: []corev1.VolumeMount{{
						Name: "settings", MountPath: SettingsDir + "/" + SettingsFile, SubPath: SettingsFile, ReadOnly: true,
					}},
					ReadinessProbe: readiness,
					StartupProbe:   startup,
				}},
				Volumes: []corev1.Volume{{Name: "settings", VolumeSource: corev1.VolumeSource{
					ConfigMap: &corev1.ConfigMapVolumeSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: h.Status.ConfigMap},
					},
				}}},
			},
		})
}

// desiredService is the Service in front of the pods, on ServicePort.
func desiredService(h *v1alpha1.Horizon) *corev1.Service {
	return deployment.HTTPService(metav1.ObjectMeta{Name: h.Name, Namespace: h.Namespace, Labels: labels(h)},
		selectorLabels(h), ServicePort)
}

// desiredPDB lets a drain evict one dashboard pod at a time (maxUnavailable 1), so a
// single-replica Horizon does not block node maintenance.
func desiredPDB(h *v1alpha1.Horizon) *policyv1.PodDisruptionBudget {
	return deployment.OneUnavailablePDB(metav1.ObjectMeta{Name: h.Name, Namespace: h.Namespace, Labels: labels(h)},
		selectorLabels(h))
}
