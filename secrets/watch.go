package secrets

import (
	"context"
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/multicluster"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// ErrNilStoreMapper is returned by AddStoreWatches for a nil mapper.
var ErrNilStoreMapper = errors.New("secrets: store watch mapper must not be nil")

// AddStoreWatches adds the multicluster.AddInputWatch legs for the stores a CR can
// select through spec.secretStoreRef: ClusterSecretStore unless namespaceScoped (an
// operator started with --namespace cannot watch a cluster-scoped kind), then
// SecretStore, each mapped through mapper(c, kind) (for example a [StoreRefFanOut]),
// so a store that changes on the management cluster or on a target cluster
// re-triggers exactly the CRs that select it there, without waiting for a periodic
// requeue.
//
// A nil mapper returns [ErrNilStoreMapper] ("secrets: store watch mapper must not be
// nil"); an AddInputWatch error ("resolving input kind for remote watch: ...") is
// returned unchanged. Both return a nil builder.
func AddStoreWatches(
	b *mcbuilder.Builder,
	scheme *runtime.Scheme,
	targets multicluster.TargetClusterFunc,
	namespaceScoped bool,
	c client.Reader,
	mapper func(client.Reader, commonv1.SecretStoreRefKind) handler.MapFunc,
) (*mcbuilder.Builder, error) {
	if mapper == nil {
		return nil, ErrNilStoreMapper
	}
	var err error
	if !namespaceScoped {
		b, err = multicluster.AddInputWatch(b, scheme, targets, &esov1.ClusterSecretStore{},
			mapper(c, commonv1.ClusterSecretStoreKind))
		if err != nil {
			return nil, err
		}
	}
	b, err = multicluster.AddInputWatch(b, scheme, targets, &esov1.SecretStore{},
		mapper(c, commonv1.SecretStoreKind))
	if err != nil {
		return nil, err
	}
	return b, nil
}

// SecretRefIndex is the field index IndexSecretRefs registers on a CR kind: the names
// of the Secrets of its own namespace that a CR reads.
const SecretRefIndex = "secrets.reconciler-sdk.c5c3.io/secret-refs"

// IndexSecretRefs registers the SecretRefIndex field index on the CR kind of obj with
// indexer (mgr.GetLocalManager().GetFieldIndexer()): names returns the names of the
// Secrets, in the CR's namespace, that a CR reads (a synced SECRET_KEY, a password
// Secret). SecretRefFanOut then finds the CRs of a Secret without listing every CR.
// A nil names panics, so a wiring mistake fails at manager setup.
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

// SecretRefFanOut returns the map function of a Secret watch: it lists, through c (the
// manager's cached client, so no request is sent), the CRs of the Secret's namespace
// whose SecretRefIndex holds the Secret's name, and enqueues them, sorted by name.
// newList returns an empty list of the CR kind. A failed List is logged through the
// context's logger and enqueues nothing. A nil newList panics.
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

// AddSecretWatches adds the multicluster.AddInputWatch legs for the Secrets the CRs
// read, mapped through mapFn (for example a [SecretRefFanOut]): a Secret that changes
// on the management cluster re-triggers the CRs without a target cluster that read it,
// one on a target cluster the CRs that name that cluster. Only the Secrets the
// operator's cache holds raise events: with apply.CacheOptions those carrying the
// operator's managed-by label, so label the Secrets it reads (an ExternalSecret's
// target template can). A nil mapFn returns [ErrNilSecretMapper]; an AddInputWatch
// error is returned unchanged. Both return a nil builder.
func AddSecretWatches(b *mcbuilder.Builder, scheme *runtime.Scheme, targets multicluster.TargetClusterFunc, mapFn handler.MapFunc) (*mcbuilder.Builder, error) {
	if mapFn == nil {
		return nil, ErrNilSecretMapper
	}
	return multicluster.AddInputWatch(b, scheme, targets, &corev1.Secret{}, mapFn)
}

// ErrNilSecretMapper is returned by AddSecretWatches for a nil map function.
var ErrNilSecretMapper = errors.New("secrets: secret watch map function must not be nil")
