package child

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// newList returns an empty list of O's kind from scheme (the kind's List type).
func newList[O client.Object](scheme *runtime.Scheme) (client.ObjectList, error) {
	gvk, err := gvkOf[O](scheme)
	if err != nil {
		return nil, err
	}
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	obj, err := scheme.New(listGVK)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", apply.ErrUnknownKind, listGVK, err)
	}
	list, ok := obj.(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("%w: %s is not a list", apply.ErrUnknownKind, listGVK)
	}
	return list, nil
}

// prune lists the children of list's kind in owner's namespace and deletes every one
// that owner controls (apply.IsControlled), that is not being deleted and that desired
// does not name; each delete is preconditioned on the UID listed.
func prune[O client.Object](ctx context.Context, c client.Client, owner client.Object, list client.ObjectList, desired []O) error {
	if err := c.List(ctx, list, client.InNamespace(owner.GetNamespace())); err != nil {
		return fmt.Errorf("list in namespace %q: %w", owner.GetNamespace(), err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return fmt.Errorf("list in namespace %q: %w", owner.GetNamespace(), err)
	}
	wanted := make(map[client.ObjectKey]bool, len(desired))
	for _, obj := range desired {
		wanted[client.ObjectKeyFromObject(obj)] = true
	}
	var errs []error
	for _, item := range items {
		obj, ok := item.(client.Object)
		if !ok || wanted[client.ObjectKeyFromObject(obj)] || !apply.IsControlled(c, owner, obj) || obj.GetDeletionTimestamp() != nil {
			continue
		}
		if err := apply.DeleteObject(ctx, c, obj); err != nil {
			errs = append(errs, fmt.Errorf("prune: %w", err))
		}
	}
	return errors.Join(errs...)
}
