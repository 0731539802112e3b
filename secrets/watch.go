package secrets

import (
	"errors"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
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
