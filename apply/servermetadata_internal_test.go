package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every server-set metadata field is seen by hasServerMetadata, emptied by
// clearServerMetadata and left out of the body desiredUnstructured builds.
func TestServerMetadata(t *testing.T) {
	grace := int64(30)
	now := metav1.Now()
	full := metav1.ObjectMeta{Name: "a", Namespace: "ns", Labels: map[string]string{"k": "v"},
		ResourceVersion: "7", UID: "u", Generation: 2, CreationTimestamp: now,
		DeletionTimestamp: &now, DeletionGracePeriodSeconds: &grace,
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}
	full.SetSelfLink("/x")
	for _, f := range serverMetadata {
		t.Run(f.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}}
			if hasServerMetadata(cm) {
				t.Fatal("hasServerMetadata of an object with no server metadata")
			}
			// Only this field, copied from full.
			source := &corev1.ConfigMap{ObjectMeta: *full.DeepCopy()}
			if !f.set(source) {
				t.Fatalf("%s not set on the full object", f.name)
			}
			for _, g := range serverMetadata {
				if g.name != f.name {
					g.clear(source)
				}
			}
			if !f.set(source) || !hasServerMetadata(source) {
				t.Fatalf("%s alone: hasServerMetadata = false", f.name)
			}
			u, err := desiredUnstructured(source)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := u.Object["metadata"].(map[string]any)[f.name]; ok {
				t.Errorf("the body to write carries %s", f.name)
			}
			clearServerMetadata(source)
			if hasServerMetadata(source) {
				t.Errorf("%s left by clearServerMetadata", f.name)
			}
			if source.Name != "a" || source.Namespace != "ns" || source.Labels["k"] != "v" {
				t.Errorf("clearServerMetadata changed the object's own metadata: %+v", source.ObjectMeta)
			}
		})
	}
	all := &corev1.ConfigMap{ObjectMeta: *full.DeepCopy()}
	clearServerMetadata(all)
	want := metav1.ObjectMeta{Name: "a", Namespace: "ns", Labels: map[string]string{"k": "v"}}
	if diff := cmp.Diff(want, all.ObjectMeta); diff != "" {
		t.Errorf("after clearServerMetadata (-want +got):\n%s", diff)
	}
}
