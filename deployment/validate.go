package deployment

import "sigs.k8s.io/controller-runtime/pkg/client"

// keyOf names an object as namespace/name (name alone when cluster-scoped).
func keyOf(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
