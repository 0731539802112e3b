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

// CacheOptions returns the manager cache options that keep the operator's memory from
// growing with the cluster: Secrets and ConfigMaps are cached only when they carry
// ManagedByLabel=fieldManager, i.e. the ones this operator's Applier wrote. Every other
// kind is cached as usual (the children the controller Owns are watched anyway).
//
//	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
//		Cache:  apply.CacheOptions("keystone-operator"),
//		Client: client.Options{Cache: &client.CacheOptions{DisableFor: reconcile.UncachedObjects()}},
//	})
//	applier := apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{
//		FieldManager: "keystone-operator", APIReader: mgr.GetAPIReader()})
//
// With such a cache a Get of a Secret or ConfigMap the operator did not write (a user's
// password Secret, a policy override ConfigMap) is not found in the cache; the Applier
// confirms such a miss through ApplierOptions.APIReader, so it costs one GET and is never
// taken for missing. A List of Secrets or ConfigMaps through the cache sees only the
// labelled ones: the SDK lists them only to prune what it created itself.
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
