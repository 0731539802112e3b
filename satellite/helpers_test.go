package satellite_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/multicluster"
)

// widgetGVK is the parent kind of the tests: the test CRD, which embeds
// spec.targetClusterRef.
var widgetGVK = schema.GroupVersionKind{Group: "testcrd.reconciler-sdk.c5c3.io", Version: "v1", Kind: "Widget"}

// emptyWidget is the empty parent object ResolveParentChildren fills.
func emptyWidget() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(widgetGVK)
	return u
}

// newWidget returns a Widget; a non-empty target sets spec.targetClusterRef.name.
func newWidget(ns, name, target string) *unstructured.Unstructured {
	u := emptyWidget()
	u.SetNamespace(ns)
	u.SetName(name)
	if target != "" {
		u.Object["spec"] = map[string]any{"targetClusterRef": map[string]any{"name": target}}
	}
	return u
}

// createWidget creates a Widget on the test control plane.
func createWidget(t *testing.T, ns, name, target string) *unstructured.Unstructured {
	t.Helper()
	w := newWidget(ns, name, target)
	if err := env.Client.Create(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

// widgetTargetRef reads spec.targetClusterRef off a Widget, as an operator's
// TargetClusterRef func reads it off its typed parent.
func widgetTargetRef(obj client.Object) *commonv1.TargetClusterRefSpec {
	u := obj.(*unstructured.Unstructured)
	name, found, err := unstructured.NestedString(u.Object, "spec", "targetClusterRef", "name")
	if err != nil || !found {
		return nil
	}
	return &commonv1.TargetClusterRefSpec{Name: name}
}

// fakeResolver resolves the management cluster (a nil ref or an empty name) to local
// and each registered name to its client; any other name does not resolve. It records
// every ref it is asked for.
type fakeResolver struct {
	local    client.Client
	clusters map[string]client.Client

	mu   sync.Mutex
	refs []*commonv1.TargetClusterRefSpec
}

// Resolve implements multicluster.Resolver.
func (r *fakeResolver) Resolve(_ context.Context, ref *commonv1.TargetClusterRefSpec) (*multicluster.Target, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ref == nil {
		r.refs = append(r.refs, nil)
	} else {
		r.refs = append(r.refs, &commonv1.TargetClusterRefSpec{Name: ref.Name})
	}
	if ref == nil || ref.Name == "" {
		return &multicluster.Target{Client: r.local}, nil
	}
	c, ok := r.clusters[ref.Name]
	if !ok {
		return nil, fmt.Errorf("%w: cluster %q is not registered", multicluster.ErrTargetClusterUnavailable, ref.Name)
	}
	return &multicluster.Target{Name: ref.Name, Client: c}, nil
}

// asked returns the refs the resolver was asked for.
func (r *fakeResolver) asked() []*commonv1.TargetClusterRefSpec {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refs
}

// noClientResolver answers every ref with a Target that has no client.
type noClientResolver struct{}

// Resolve implements multicluster.Resolver.
func (noClientResolver) Resolve(context.Context, *commonv1.TargetClusterRefSpec) (*multicluster.Target, error) {
	return &multicluster.Target{Name: "broken"}, nil
}

// deployment returns a Deployment whose pod template carries volumes.
func deployment(ns, name string, volumes ...corev1.Volume) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "api", Image: "registry.example/api:1"}},
					Volumes:    volumes,
				},
			},
		},
	}
}

// secretVolume is a pod volume that mounts the Secret secretName.
func secretVolume(name, secretName string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secretName}}}
}

// configMapVolume is a pod volume that mounts the ConfigMap cmName.
func configMapVolume(name, cmName string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cmName}}}}
}

// emptyDirVolume is a pod volume backed by an emptyDir.
func emptyDirVolume(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}

// secret returns a Secret with data.
func secret(ns, name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// create creates objs on the test control plane.
func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("create %T %s: %v", o, client.ObjectKeyFromObject(o), err)
		}
	}
}
