package secrets

import (
	"context"
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/multicluster"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// Errors of the watch helpers, returned before anything is registered.
var (
	// ErrNilStoreMapper is returned by AddStoreWatches and WatchStores for a nil mapper.
	ErrNilStoreMapper = errors.New("secrets: store watch mapper must not be nil")
	// ErrNilSecretMapper is returned by AddSecretWatches and WatchSecrets for a nil map
	// function.
	ErrNilSecretMapper = errors.New("secrets: secret watch map function must not be nil")
	// ErrNilBuilder is returned by WatchStores and WatchSecrets for a nil builder.
	ErrNilBuilder = errors.New("secrets: watch builder must not be nil")
)

// storeLeg is one store watch: the kind it observes and the map function of its events.
type storeLeg struct {
	obj   client.Object
	mapFn handler.MapFunc
}

// storeLegs returns the store watches a CR's spec.secretStoreRef calls for (see "Watches"
// in the package documentation), each mapped through mapper(c, kind).
func storeLegs(c client.Reader, namespaceScoped bool, mapper StoreMapper) ([]storeLeg, error) {
	if mapper == nil {
		return nil, ErrNilStoreMapper
	}
	var legs []storeLeg
	if !namespaceScoped {
		legs = append(legs, storeLeg{&esov1.ClusterSecretStore{}, mapper(c, commonv1.ClusterSecretStoreKind)})
	}
	return append(legs, storeLeg{&esov1.SecretStore{}, mapper(c, commonv1.SecretStoreKind)}), nil
}

// AddStoreWatches adds the store watches ("Watches" in the package documentation) to a
// multicluster builder through multicluster.AddInputWatch, so a store change on the
// management or a target cluster re-triggers the CRs that select it there. A nil mapper
// returns [ErrNilStoreMapper]; an AddInputWatch error ("resolving input kind for remote
// watch: ...") is returned unchanged; both with a nil builder.
func AddStoreWatches(
	b *mcbuilder.Builder,
	scheme *runtime.Scheme,
	targets multicluster.TargetClusterFunc,
	namespaceScoped bool,
	c client.Reader,
	mapper func(client.Reader, commonv1.SecretStoreRefKind) handler.MapFunc,
) (*mcbuilder.Builder, error) {
	legs, err := storeLegs(c, namespaceScoped, mapper)
	if err != nil {
		return nil, err
	}
	for _, leg := range legs {
		if b, err = multicluster.AddInputWatch(b, scheme, targets, leg.obj, leg.mapFn); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// WatchStores is [AddStoreWatches] for a single-cluster operator's plain controller
// builder: the same store watches, every mapped request enqueued. A nil builder returns
// [ErrNilBuilder], a nil mapper [ErrNilStoreMapper], both with a nil builder.
func WatchStores(b *builder.Builder, c client.Reader, namespaceScoped bool, mapper StoreMapper) (*builder.Builder, error) {
	if b == nil {
		return nil, ErrNilBuilder
	}
	legs, err := storeLegs(c, namespaceScoped, mapper)
	if err != nil {
		return nil, err
	}
	for _, leg := range legs {
		b = b.Watches(leg.obj, handler.EnqueueRequestsFromMapFunc(leg.mapFn))
	}
	return b, nil
}

// SecretRefIndex is the field index IndexSecretRefs registers on a CR kind: the names
// of the Secrets of its own namespace that a CR reads.
const SecretRefIndex = "secrets.reconciler-sdk.c5c3.io/secret-refs"

// IndexSecretRefs registers [SecretRefIndex] on the CR kind of obj with indexer (the
// manager's field indexer): names returns the Secrets, in the CR's namespace, that a CR
// reads. A nil names panics, so a wiring mistake fails at manager setup.
func IndexSecretRefs[T client.Object](ctx context.Context, indexer client.FieldIndexer, obj T, names func(T) []string) error {
	if names == nil {
		panic("secrets: IndexSecretRefs needs a names function")
	}
	err := indexer.IndexField(ctx, obj, SecretRefIndex, func(o client.Object) []string {
		cr, ok := o.(T)
		if !ok {
			return nil
		}
		return names(cr)
	})
	if err != nil {
		return fmt.Errorf("indexing %T by %s: %w", obj, SecretRefIndex, err)
	}
	return nil
}

// SecretRefFanOut returns the map function of a Secret watch: the CRs of the Secret's
// namespace whose [SecretRefIndex] holds its name, listed through c (the manager's
// cached client) and sorted by name. newList returns an empty list of the CR kind. A
// failed List is logged and enqueues nothing; a nil newList panics.
func SecretRefFanOut(c client.Reader, newList func() client.ObjectList) handler.MapFunc {
	if newList == nil {
		panic("secrets: SecretRefFanOut needs a newList function")
	}
	return func(ctx context.Context, secret client.Object) []crreconcile.Request {
		list := newList()
		if err := c.List(ctx, list, client.InNamespace(secret.GetNamespace()),
			client.MatchingFields{SecretRefIndex: secret.GetName()}); err != nil {
			log.FromContext(ctx).Error(err, "listing the readers of a Secret", "secret", client.ObjectKeyFromObject(secret))
			return nil
		}
		var reqs []crreconcile.Request
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			if obj, ok := o.(client.Object); ok {
				reqs = append(reqs, crreconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
			}
			return nil
		})
		sort.Slice(reqs, func(i, j int) bool { return reqs[i].Name < reqs[j].Name })
		return reqs
	}
}

// AddSecretWatches adds the Secret watch ("Watches" in the package documentation) to a
// multicluster builder through multicluster.AddInputWatch, mapped through mapFn (a
// [SecretRefFanOut]). A nil mapFn returns [ErrNilSecretMapper]; an AddInputWatch error
// is returned unchanged; both with a nil builder.
func AddSecretWatches(b *mcbuilder.Builder, scheme *runtime.Scheme, targets multicluster.TargetClusterFunc, mapFn handler.MapFunc) (*mcbuilder.Builder, error) {
	if mapFn == nil {
		return nil, ErrNilSecretMapper
	}
	return multicluster.AddInputWatch(b, scheme, targets, &corev1.Secret{}, mapFn)
}

// WatchSecrets is [AddSecretWatches] for a single-cluster operator's plain controller
// builder. A nil builder returns [ErrNilBuilder], a nil mapFn [ErrNilSecretMapper], both
// with a nil builder.
func WatchSecrets(b *builder.Builder, mapFn handler.MapFunc) (*builder.Builder, error) {
	if b == nil {
		return nil, ErrNilBuilder
	}
	if mapFn == nil {
		return nil, ErrNilSecretMapper
	}
	return b.Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(mapFn)), nil
}
