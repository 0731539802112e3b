package apply

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// GetUncached reads the object at key into obj through c, past c's informers: it reads
// as unstructured, which a manager's client serves from the API server (unless its cache
// was told to cache unstructured objects). Helpers call it where a cache that has not
// caught up would mislead them: after a create lost to AlreadyExists, or to confirm a
// not-found answer. obj's kind must be known to c's scheme.
func GetUncached(ctx context.Context, c client.Client, key client.ObjectKey, obj client.Object) error {
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnknownKind, err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, key, u); err != nil {
		return err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return fmt.Errorf("convert %s %s from unstructured: %w", gvk.Kind, key, err)
	}
	return nil
}

// ListUncached lists into list through c, past c's informers, the way [GetUncached]
// reads one object: as unstructured. Helpers call it where a list from a cache that
// has not caught up would mislead them, such as an object created earlier in the same
// pass that decides whether something may be generated. list's kind must be known to
// c's scheme.
func ListUncached(ctx context.Context, c client.Client, list client.ObjectList, opts ...client.ListOption) error {
	gvk, err := c.GroupVersionKindFor(list)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnknownKind, err)
	}
	u := &unstructured.UnstructuredList{}
	u.SetGroupVersionKind(gvk)
	if err := c.List(ctx, u, opts...); err != nil {
		return err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), list); err != nil {
		return fmt.Errorf("convert %s from unstructured: %w", gvk.Kind, err)
	}
	return nil
}
