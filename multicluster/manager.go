package multicluster

import (
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/providers/kubeconfig"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/shard"
)

// KubeconfigSecretLabel is the label, set to "true", that registers a Secret of the
// clusters namespace as a target cluster; the Secret's name is the cluster's name and
// its data key [KubeconfigSecretKey] holds the kubeconfig that reaches it.
const KubeconfigSecretLabel = kubeconfig.DefaultKubeconfigSecretLabel

// KubeconfigSecretKey is the data key of a registration Secret holding the kubeconfig.
const KubeconfigSecretKey = kubeconfig.DefaultKubeconfigSecretKey

// ErrInvalidOptions reports manager or resolver options that cannot work; the error
// names the field.
var ErrInvalidOptions = errors.New("invalid multicluster options")

// ManagerOptions configure [NewManager].
type ManagerOptions struct {
	// ClustersNamespace is the namespace of the management cluster whose labelled
	// kubeconfig Secrets register target clusters (the examples' --clusters-namespace).
	// Empty means no target clusters: the manager runs on the management cluster only
	// and every spec.targetClusterRef resolves to TargetClusterUnavailable.
	ClustersNamespace string
	// FieldManager is the operator's field-manager name. Each target cluster's cache
	// keeps only the Secrets and ConfigMaps labelled with it (apply.CacheOptions), and
	// leaves Pods and ControllerRevisions uncached (reconcile.UncachedObjects), as the
	// management cluster's should. Empty means apply.FieldManager.
	FieldManager string
	// ClusterOptions are applied last to every target cluster's options (after the
	// manager's scheme and the cache settings above).
	ClusterOptions []cluster.Option
	// Kubeconfig bounds what a kubeconfig Secret may make the operator do: by default
	// a kubeconfig with an exec or auth-provider plugin, a field that reads a file of
	// the operator's pod, or weakened TLS is refused (see [KubeconfigOptions]).
	Kubeconfig KubeconfigOptions
	// Shard, when set, narrows the children on every target cluster to this replica's
	// buckets: each target cluster's rest config is wrapped with
	// shard.Member.OwnedTransport, so the lists and watches of the kinds of
	// shard.Member.SelectOwned (a [CRReconciler] registers its owned kinds) carry the
	// member's bucket label selector, which every API server serves, and are listed
	// again when its ranges change. The [ClusterResolver]'s Applier of every target
	// cluster then confirms a cache miss through the API reader
	// (apply.ApplierOptions.SelectedCache) and stamps the bucket label
	// (shard.OwnerLabels, unless ResolverOptions.Applier.OwnerLabels names others).
	// RunOperator sets it with OperatorOptions.Sharded and ShardSelectors. Nil leaves
	// the target clusters' informers unnarrowed.
	Shard *shard.Member
}

// NewManager builds a multicluster-runtime manager for cfg (the management cluster)
// with mgrOpts, and, when opts.ClustersNamespace is set, the kubeconfig provider that
// turns each labelled Secret of that namespace into an engaged target cluster. The
// provider reads the Secrets through a check of opts.Kubeconfig: a Secret whose
// kubeconfig is refused is not engaged (nothing in it is executed, read or sent) and
// carries a Warning event [ReasonKubeconfigRefused]. The target clusters share the
// manager's scheme, so every kind the operator writes there is known. With opts.Shard
// their children informers hold only the member's buckets. Only a manager
// built here serves target clusters to a [ClusterResolver].
//
// Register controllers on it with sigs.k8s.io/multicluster-runtime/pkg/builder: the
// CR kind and its local children with For and Owns engaged with the local cluster
// only (mcbuilder.WithEngageWithLocalCluster(true),
// mcbuilder.WithEngageWithProviderClusters(false)), the children on target clusters
// with [AddChildWatches], and inputs with [AddInputWatch]. Start it with Start(ctx).
//
// mgrOpts.Cache should come from [CacheOptions], which also keeps the registration
// Secrets visible to the provider when Secrets are cached by label.
func NewManager(cfg *rest.Config, mgrOpts ctrl.Options, opts ManagerOptions) (mcmanager.Manager, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%w: rest config is nil", ErrInvalidOptions)
	}
	if opts.ClustersNamespace == "" {
		mgr, err := mcmanager.New(cfg, nil, mgrOpts)
		if err != nil {
			return nil, fmt.Errorf("multicluster manager: %w", err)
		}
		return mgr, nil
	}
	fieldManager := opts.FieldManager
	if fieldManager == "" {
		fieldManager = apply.FieldManager
	}
	clusterOpts := append([]cluster.Option{func(o *cluster.Options) {
		o.Scheme = mgrOpts.Scheme
		o.Cache = apply.CacheOptions(fieldManager)
		o.Client.Cache = &client.CacheOptions{DisableFor: reconcile.UncachedObjects()}
	}}, opts.ClusterOptions...)
	kopts := kubeconfig.Options{ClusterOptions: clusterOpts}
	if m := opts.Shard; m != nil {
		kopts.RESTOptions = []func(*rest.Config) error{func(cfg *rest.Config) error {
			cfg.Wrap(m.OwnedTransport())
			return nil
		}}
	}
	provider := newSecretProvider(opts.ClustersNamespace, opts.Kubeconfig, kopts)
	provider.shard = opts.Shard
	mgr, err := mcmanager.New(cfg, provider, mgrOpts)
	if err != nil {
		return nil, fmt.Errorf("multicluster manager: %w", err)
	}
	if err := provider.setup(mgr, fieldManager); err != nil {
		return nil, fmt.Errorf("multicluster manager: kubeconfig provider for namespace %q: %w",
			opts.ClustersNamespace, err)
	}
	return mgr, nil
}

// CacheOptions returns apply.CacheOptions(fieldManager) (Secrets and ConfigMaps cached
// only when this operator wrote them) with one exception: in clustersNamespace the
// cached Secrets are the kubeconfig registrations ([KubeconfigSecretLabel]=true), which
// the provider reads through the cache. The operator's own Secrets in that namespace
// are then read past the cache (the Applier's APIReader confirms a miss), so keep
// clustersNamespace for registrations. An empty clustersNamespace returns
// apply.CacheOptions unchanged. defaultNamespaces are the namespaces the manager is
// restricted to (--namespace); empty means all namespaces.
func CacheOptions(fieldManager, clustersNamespace string, defaultNamespaces ...string) cache.Options {
	opts := apply.CacheOptions(fieldManager)
	for _, ns := range defaultNamespaces {
		if opts.DefaultNamespaces == nil {
			opts.DefaultNamespaces = map[string]cache.Config{}
		}
		opts.DefaultNamespaces[ns] = cache.Config{}
	}
	if clustersNamespace == "" {
		return opts
	}
	byObject := maps.Clone(opts.ByObject)
	for obj, by := range byObject {
		if _, ok := obj.(*corev1.Secret); !ok {
			continue
		}
		registrations := labels.SelectorFromSet(labels.Set{KubeconfigSecretLabel: "true"})
		namespaces := map[string]cache.Config{clustersNamespace: {LabelSelector: registrations}}
		if len(defaultNamespaces) == 0 {
			namespaces[cache.AllNamespaces] = cache.Config{LabelSelector: by.Label}
		}
		for _, ns := range defaultNamespaces {
			if ns != clustersNamespace {
				namespaces[ns] = cache.Config{LabelSelector: by.Label}
			}
		}
		by.Label = nil
		by.Namespaces = namespaces
		byObject[obj] = by
	}
	opts.ByObject = byObject
	return opts
}
