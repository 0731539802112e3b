package deployment

import (
	"fmt"
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// validateOwned refuses, before any API call, the input apply.EnsureObject would
// refuse: an object without a name, a nil owner or one never persisted.
func validateOwned(owner, obj client.Object) error {
	switch {
	case obj.GetName() == "":
		return fmt.Errorf("%w: metadata.name is empty", apply.ErrMissingName)
	case isNil(owner):
		return apply.ErrNilOwner
	case owner.GetUID() == "":
		return fmt.Errorf("%w: owner %s must be read from the API server first", apply.ErrOwnerNotPersisted, keyOf(owner))
	}
	return nil
}

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
