package child

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// checkInput refuses, before any API call, an owner that is nil or was never persisted
// and a nil scheme.
func checkInput(scheme *runtime.Scheme, owner client.Object) error {
	if err := apply.ValidateOwner(owner); err != nil {
		return err
	}
	return apply.CheckScheme(scheme)
}

// matchKey fills obj's empty namespace and name from key and refuses a different one
// with ErrKeyMismatch.
func matchKey(key client.ObjectKey, obj client.Object) error {
	if key.Name == "" {
		return fmt.Errorf("%w: the key has no name", apply.ErrMissingName)
	}
	if obj.GetNamespace() == "" {
		obj.SetNamespace(key.Namespace)
	}
	if obj.GetName() == "" {
		obj.SetName(key.Name)
	}
	if got := client.ObjectKeyFromObject(obj); got != key {
		return fmt.Errorf("%w: desired %s, key %s", ErrKeyMismatch, got, key)
	}
	return nil
}

// checkSet refuses a set with a nil entry, an entry without a name or in another
// namespace than a namespaced owner's, or two entries with one key; an entry with an
// empty namespace takes a namespaced owner's.
func checkSet[O client.Object](owner client.Object, desired []O) error {
	ns := owner.GetNamespace()
	seen := make(map[client.ObjectKey]bool, len(desired))
	for i, obj := range desired {
		if isNil(obj) {
			return fmt.Errorf("%w: entry %d is nil", ErrInvalidSet, i)
		}
		if obj.GetName() == "" {
			return fmt.Errorf("%w: entry %d has no metadata.name", ErrInvalidSet, i)
		}
		if ns != "" && obj.GetNamespace() == "" {
			obj.SetNamespace(ns)
		}
		key := client.ObjectKeyFromObject(obj)
		if ns != "" && key.Namespace != ns {
			return fmt.Errorf("%w: entry %d (%s) is not in the owner's namespace %q", ErrInvalidSet, i, key, ns)
		}
		if seen[key] {
			return fmt.Errorf("%w: %s is listed twice", ErrInvalidSet, key)
		}
		seen[key] = true
	}
	return nil
}
