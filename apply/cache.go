package apply

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ManagedByLabel is the label an Applier puts on every object it creates or applies,
// set to its field-manager name. CacheOptions selects the cached Secrets and ConfigMaps
// by it.
const ManagedByLabel = "app.kubernetes.io/managed-by"

// CacheOptions returns the manager cache options that cache Secrets and ConfigMaps only
// when they carry [ManagedByLabel] = fieldManager (the ones this operator's Applier wrote),
// and every other kind as usual. Give the Applier the manager's APIReader, so a Get of one
// the operator did not write is read from the API server, never taken for missing
// (package documentation, "Cache memory that does not grow with the cluster"):
//
//	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
//		Cache:  apply.CacheOptions("my-operator"),
//		Client: client.Options{Cache: &client.CacheOptions{DisableFor: reconcile.UncachedObjects()}},
//	})
//	applier := apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{
//		FieldManager: "my-operator", APIReader: mgr.GetAPIReader()})
func CacheOptions(fieldManager string) cache.Options {
	sel := labels.SelectorFromSet(labels.Set{ManagedByLabel: fieldManager})
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Secret{}:    {Label: sel},
		&corev1.ConfigMap{}: {Label: sel},
	}}
}

// labelFiltered reports whether CacheOptions caches obj's kind by label only.
func labelFiltered(obj client.Object) bool {
	switch obj.(type) {
	case *corev1.Secret, *corev1.ConfigMap:
		return true
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	return gvk.Group == "" && (gvk.Kind == "Secret" || gvk.Kind == "ConfigMap")
}
