package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
)

// revisionAnnotation is the Deployment controller's revision number on a Deployment
// and its ReplicaSets.
const revisionAnnotation = "deployment.kubernetes.io/revision"

// rollout is the state of a Horizon's Deployment as the demo reports it.
type rollout struct {
	dep *appsv1.Deployment
	// current is the ReplicaSet of the Deployment's revision; nil before it exists.
	current *appsv1.ReplicaSet
	// all are the Deployment's ReplicaSets, newest revision first.
	all []appsv1.ReplicaSet
}

// complete tells whether the Deployment has rolled out its template: observed, every
// replica updated and available, no old replica left.
func (r rollout) complete() bool {
	d := r.dep
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == want &&
		d.Status.Replicas == want && d.Status.AvailableReplicas == want && r.current != nil
}

// keyHash is the SECRET_KEY digest on the pod template.
func (r rollout) keyHash() string {
	return r.dep.Spec.Template.Annotations[controller.SecretKeyHashAnnotation]
}

// readRollout reads the Deployment at key and its ReplicaSets; a missing Deployment is
// (nil, nil).
func readRollout(ctx context.Context, c client.Client, key client.ObjectKey) (*rollout, error) {
	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, key, dep); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("reading Deployment %s: %w", key, err)
	}
	var list appsv1.ReplicaSetList
	if err := c.List(ctx, &list, client.InNamespace(key.Namespace),
		client.MatchingLabels(dep.Spec.Selector.MatchLabels)); err != nil {
		return nil, fmt.Errorf("listing the ReplicaSets of Deployment %s: %w", key, err)
	}
	r := &rollout{dep: dep}
	for _, rs := range list.Items {
		if ref := metav1.GetControllerOf(&rs); ref == nil || ref.UID != dep.UID || rs.DeletionTimestamp != nil {
			continue
		}
		r.all = append(r.all, rs)
	}
	slices.SortFunc(r.all, func(a, b appsv1.ReplicaSet) int {
		return revisionOf(&b) - revisionOf(&a)
	})
	for i := range r.all {
		if rev := dep.Annotations[revisionAnnotation]; rev != "" && r.all[i].Annotations[revisionAnnotation] == rev {
			r.current = &r.all[i]
		}
	}
	return r, nil
}

// revisionOf is the revision number of a ReplicaSet; 0 when it has none.
func revisionOf(rs *appsv1.ReplicaSet) int {
	n, _ := strconv.Atoi(rs.Annotations[revisionAnnotation])
	return n
}

// mountedConfigMap is the settings ConfigMap a pod template mounts.
func mountedConfigMap(t *corev1.PodTemplateSpec) string {
	for _, v := range t.Spec.Volumes {
		if v.ConfigMap != nil {
			return v.ConfigMap.Name
		}
	}
	return ""
}

// configMaps lists a Horizon's content-addressed ConfigMaps, newest first, in the order
// the prune ranks them (creation time, then name, both descending).
func configMaps(ctx context.Context, c client.Client, ns, baseName string) ([]corev1.ConfigMap, error) {
	var list corev1.ConfigMapList
	if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{config.ConfigBaseLabel: baseName}); err != nil {
		return nil, fmt.Errorf("listing the ConfigMaps of %s in %s: %w", baseName, ns, err)
	}
	items := list.Items
	slices.SortFunc(items, func(a, b corev1.ConfigMap) int {
		if c := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(b.Name, a.Name)
	})
	return items, nil
}
