package deployment

import (
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// keyOf names an object as namespace/name (name alone when cluster-scoped).
func keyOf(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

// isNil reports whether v is nil or a typed nil pointer inside an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
