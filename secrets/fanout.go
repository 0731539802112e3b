package secrets

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
)

// StoreMapper builds the map function of one store watch: given the reader the watch
// lists through and the store kind the watch observes, it returns the
// handler.MapFunc that turns a store event into reconcile requests. It is the mapper
// argument of the watches an operator registers on ClusterSecretStore and SecretStore.
type StoreMapper func(r client.Reader, kind commonv1.SecretStoreRefKind) handler.MapFunc

// StoreRefFanOut returns a [StoreMapper] that enqueues, sorted by namespace and name,
// the CRs whose [EffectiveStoreRef] of storeRef(cr) selects the store of the event: a
// ClusterSecretStore's CRs in every namespace, a SecretStore's in its namespace. newList
// returns an empty list of the CR kind T. A failed List is logged and enqueues nothing;
// a nil newList or storeRef panics, so a wiring mistake fails at manager setup.
func StoreRefFanOut[T client.Object](
	newList func() client.ObjectList,
	storeRef func(T) *commonv1.SecretStoreRefSpec,
) StoreMapper {
	if newList == nil || storeRef == nil {
		panic("secrets: StoreRefFanOut: newList and storeRef must not be nil")
	}
	return func(r client.Reader, kind commonv1.SecretStoreRefKind) handler.MapFunc {
		return func(ctx context.Context, store client.Object) []reconcile.Request {
			if store == nil {
				return nil
			}
			logger := log.FromContext(ctx).WithValues("storeKind", kind, "storeName", store.GetName())
			var opts []client.ListOption
			switch kind {
			case commonv1.ClusterSecretStoreKind:
			case commonv1.SecretStoreKind:
				opts = append(opts, client.InNamespace(store.GetNamespace()))
			default:
				logger.Error(ErrUnknownStoreKind, "store watch mapped no requests")
				return nil
			}
			list := newList()
			if err := r.List(ctx, list, opts...); err != nil {
				logger.Error(err, "store watch mapped no requests: list failed")
				return nil
			}
			items, err := meta.ExtractList(list)
			if err != nil {
				logger.Error(err, "store watch mapped no requests: read list items")
				return nil
			}
			var reqs []reconcile.Request
			for _, item := range items {
				cr, ok := item.(T)
				if !ok {
					logger.Error(fmt.Errorf("list item is %T, want %T", item, *new(T)), "store watch skipped an item")
					continue
				}
				if kind == commonv1.SecretStoreKind && cr.GetNamespace() != store.GetNamespace() {
					continue
				}
				ref := EffectiveStoreRef(storeRef(cr))
				if ref.Kind == kind && ref.Name == store.GetName() {
					reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cr)})
				}
			}
			slices.SortFunc(reqs, func(a, b reconcile.Request) int {
				return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
			})
			return reqs
		}
	}
}
