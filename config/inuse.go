package config

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// referenced returns the names of the objects of kind rk that a live ReplicaSet or Pod
// in namespace references.
func referenced(ctx context.Context, c client.Client, namespace string, rk resourceKind) (map[string]bool, error) {
	names := map[string]bool{}
	add := func(name string) { names[name] = true }

	var replicaSets appsv1.ReplicaSetList
	if err := c.List(ctx, &replicaSets, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list ReplicaSets in %s to spare %ss in use: %w", namespace, rk.kind, err)
	}
	for i := range replicaSets.Items {
		rs := &replicaSets.Items[i]
		if rs.DeletionTimestamp == nil {
			rk.refs(&rs.Spec.Template.Spec, add)
		}
	}

	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list Pods in %s to spare %ss in use: %w", namespace, rk.kind, err)
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			rk.refs(&pod.Spec, add)
		}
	}
	return names, nil
}

// configMapRefs yields every ConfigMap spec references: volumes, projected sources,
// envFrom and env valueFrom of all containers.
func configMapRefs(spec *corev1.PodSpec, yield func(string)) {
	for i := range spec.Volumes {
		v := &spec.Volumes[i].VolumeSource
		if v.ConfigMap != nil {
			yield(v.ConfigMap.Name)
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.ConfigMap != nil {
					yield(src.ConfigMap.Name)
				}
			}
		}
	}
	visitEnv(spec, func(from *corev1.EnvFromSource, env *corev1.EnvVar) {
		if from != nil && from.ConfigMapRef != nil {
			yield(from.ConfigMapRef.Name)
		}
		if env != nil && env.ValueFrom != nil && env.ValueFrom.ConfigMapKeyRef != nil {
			yield(env.ValueFrom.ConfigMapKeyRef.Name)
		}
	})
}

// secretRefs yields every Secret spec references: volumes, projected sources, envFrom
// and env valueFrom of all containers, and imagePullSecrets.
func secretRefs(spec *corev1.PodSpec, yield func(string)) {
	for i := range spec.Volumes {
		v := &spec.Volumes[i].VolumeSource
		if v.Secret != nil {
			yield(v.Secret.SecretName)
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.Secret != nil {
					yield(src.Secret.Name)
				}
			}
		}
	}
	for _, ref := range spec.ImagePullSecrets {
		yield(ref.Name)
	}
	visitEnv(spec, func(from *corev1.EnvFromSource, env *corev1.EnvVar) {
		if from != nil && from.SecretRef != nil {
			yield(from.SecretRef.Name)
		}
		if env != nil && env.ValueFrom != nil && env.ValueFrom.SecretKeyRef != nil {
			yield(env.ValueFrom.SecretKeyRef.Name)
		}
	})
}

// visitEnv calls visit with every envFrom source and every env var of the containers,
// init containers and ephemeral containers of spec.
func visitEnv(spec *corev1.PodSpec, visit func(*corev1.EnvFromSource, *corev1.EnvVar)) {
	each := func(envFrom []corev1.EnvFromSource, env []corev1.EnvVar) {
		for i := range envFrom {
			visit(&envFrom[i], nil)
		}
		for i := range env {
			visit(nil, &env[i])
		}
	}
	for i := range spec.InitContainers {
		each(spec.InitContainers[i].EnvFrom, spec.InitContainers[i].Env)
	}
	for i := range spec.Containers {
		each(spec.Containers[i].EnvFrom, spec.Containers[i].Env)
	}
	for i := range spec.EphemeralContainers {
		each(spec.EphemeralContainers[i].EnvFrom, spec.EphemeralContainers[i].Env)
	}
}
