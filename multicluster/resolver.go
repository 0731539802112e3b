package multicluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcmulticluster "sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/shard"
)

// Defaults of [ResolverOptions].
const (
	// DefaultReachabilityTTL is how long a target cluster that answered is trusted
	// without asking again: 10 s.
	DefaultReachabilityTTL = 10 * time.Second
	// DefaultProbeTimeout bounds one reachability probe: 5 s.
	DefaultProbeTimeout = 5 * time.Second
)

// ResolverOptions configure [NewResolver].
type ResolverOptions struct {
	// Applier configures the apply.Applier each cluster's Target.Client is: the
	// operator's field manager, the converged-apply skip. Its APIReader is set per
	// cluster, and its Remote ownership for target clusters; values set here for these
	// two fields are ignored. On the target clusters of a manager whose
	// ManagerOptions.Shard narrows their children, SelectedCache is set, and a nil
	// OwnerLabels means shard.OwnerLabels.
	Applier apply.ApplierOptions
	// ManagementCluster identifies this management cluster in the ownership labels of
	// the children it writes to target clusters, so that two management clusters
	// sharing a target never claim each other's objects. Empty means the UID of the
	// management cluster's kube-system namespace, read once by NewResolver: unique per
	// cluster and stable for its life. A value set here must be a valid label value.
	ManagementCluster string
	// ReachabilityTTL is how long a target cluster that answered a probe is trusted
	// without asking again; zero means DefaultReachabilityTTL. A converged pass on a
	// target cluster costs one GET /version per cluster and TTL, and an API server that
	// stops answering is noticed within it.
	ReachabilityTTL time.Duration
	// ProbeTimeout bounds one reachability probe; zero means DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// Shard, when set, makes every [CRReconciler] of the resolver reconcile only the CRs
	// of the member's ranges (shard.Gate, and shard.Requeue or the member's server-side
	// selector for the CR kind); RunOperator sets it with OperatorOptions.Sharded.
	Shard *shard.Member
}

// DefaultResolverOptions returns the options NewResolver uses for zero-valued fields.
func DefaultResolverOptions() ResolverOptions {
	return ResolverOptions{
		Applier:         apply.DefaultApplierOptions(),
		ReachabilityTTL: DefaultReachabilityTTL,
		ProbeTimeout:    DefaultProbeTimeout,
	}
}

// UnavailableError is the error a [ClusterResolver] returns for a target cluster that
// is not registered, does not answer, is refused or may not be used from the CR's
// namespace. errors.Is(err, ErrTargetClusterUnavailable) is true for it; its text is
// what the TargetClusterUnavailable condition says.
type UnavailableError struct {
	// Cluster is the name spec.targetClusterRef gave.
	Cluster string
	// Reason says what is wrong ("is not registered", "does not answer", "is
	// refused", "may not be used from namespace ...").
	Reason string
	// Err is the cause, if any.
	Err error
}

// Error says which cluster and why.
func (e *UnavailableError) Error() string {
	msg := fmt.Sprintf("target cluster %q %s", e.Cluster, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *UnavailableError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrTargetClusterUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrTargetClusterUnavailable }

// ClusterResolver is the [Resolver] of a multicluster-runtime manager built by
// [NewManager]: the management cluster is the manager's local cluster, a target
// cluster is the one its provider engaged under the ref's name, for a CR of a
// namespace the cluster's kubeconfig Secret lists ([AllowedNamespacesAnnotation]).
// Each cluster's Target.Client is an apply.Applier built once and kept while the
// manager has the cluster engaged (a target built for a cluster not engaged yet, or no
// longer, is used for that call only); on a target cluster it claims children with ownership
// labels (apply.RemoteOwnership). It is safe for concurrent use.
type ClusterResolver struct {
	mgr     mcmanager.Manager
	opts    ResolverOptions
	remote  apply.RemoteOwnership
	local   *Target
	mu      sync.Mutex
	targets map[string]*remoteTarget
	// live holds the clusters the manager engaged whose engagement has not ended; only
	// their targets are kept in targets.
	live map[cluster.Cluster]bool
	now  func() time.Time
}

type remoteTarget struct {
	cluster   cluster.Cluster
	target    *Target
	discovery rest.Interface
	answered  time.Time
}

// NewResolver builds the resolver of mgr and adds to mgr the runnable that drops a
// target cluster's cached target once the provider disengages it. Call it before mgr
// starts (it reads the kube-system namespace through the manager's API reader when
// opts.ManagementCluster is empty).
func NewResolver(ctx context.Context, mgr mcmanager.Manager, opts ResolverOptions) (*ClusterResolver, error) {
	if mgr == nil {
		return nil, fmt.Errorf("%w: manager is nil", ErrInvalidOptions)
	}
	def := DefaultResolverOptions()
	if opts.ReachabilityTTL <= 0 {
		opts.ReachabilityTTL = def.ReachabilityTTL
	}
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = def.ProbeTimeout
	}
	local := mgr.GetLocalManager()
	if opts.ManagementCluster == "" {
		id, err := ManagementClusterID(ctx, local.GetAPIReader())
		if err != nil {
			return nil, err
		}
		opts.ManagementCluster = id
	}
	remote := apply.RemoteOwnership{ManagementCluster: opts.ManagementCluster}
	if err := remote.Validate(); err != nil {
		return nil, fmt.Errorf("%w: ManagementCluster: %w", ErrInvalidOptions, err)
	}
	localOpts := opts.Applier
	localOpts.Remote = nil
	localOpts.APIReader = local.GetAPIReader()
	r := &ClusterResolver{
		mgr:    mgr,
		opts:   opts,
		remote: remote,
		local: &Target{
			Client:     apply.NewApplier(local.GetClient(), localOpts),
			APIReader:  local.GetAPIReader(),
			RESTMapper: local.GetRESTMapper(),
		},
		targets: map[string]*remoteTarget{},
		live:    map[cluster.Cluster]bool{},
		now:     time.Now,
	}
	if err := mgr.Add(disengaged{r}); err != nil {
		return nil, fmt.Errorf("multicluster resolver: %w", err)
	}
	return r, nil
}

// disengaged is the resolver's part in the manager: told of every target cluster the
// provider engages, it drops the cluster's cached target (its Applier, clients and
// transports) once the provider disengages it (its Secret deleted or changed), so a
// cluster removed leaves nothing behind in the resolver.
type disengaged struct{ r *ClusterResolver }

// Start implements manager.Runnable: it waits for the manager to stop.
func (disengaged) Start(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: every replica resolves.
func (disengaged) NeedLeaderElection() bool { return false }

// Engage implements multicluster.Aware: it marks cl live, so that the resolver keeps
// its target, until ctx, the cluster's lifetime, ends; then the cached target of cl is
// dropped (one of a newer cluster under name is kept). A cl engaged with a ctx that has
// already ended is never live.
func (d disengaged) Engage(ctx context.Context, name mcmulticluster.ClusterName, cl cluster.Cluster) error {
	d.r.mu.Lock()
	if ctx.Err() == nil {
		d.r.live[cl] = true
	}
	d.r.mu.Unlock()
	context.AfterFunc(ctx, func() {
		d.r.mu.Lock()
		defer d.r.mu.Unlock()
		delete(d.r.live, cl)
		if rt, ok := d.r.targets[string(name)]; ok && rt.cluster == cl {
			delete(d.r.targets, string(name))
		}
	})
	return nil
}

// ManagementClusterID returns the UID of the kube-system namespace read through r: the
// identity [NewResolver] gives a management cluster when none is configured.
func ManagementClusterID(ctx context.Context, r client.Reader) (string, error) {
	if r == nil {
		return "", fmt.Errorf("%w: reader is nil", ErrInvalidOptions)
	}
	ns := &corev1.Namespace{}
	if err := r.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, ns); err != nil {
		return "", fmt.Errorf("management cluster identity: get Namespace %s: %w", metav1.NamespaceSystem, err)
	}
	return string(ns.UID), nil
}

// Remote returns the ownership the resolver's target-cluster clients claim children
// with; pass it to [AddChildWatches] and [Cleanup].
func (r *ClusterResolver) Remote() apply.RemoteOwnership { return r.remote }

// Local returns the management cluster's target.
func (r *ClusterResolver) Local() *Target { return r.local }

// Shard is ResolverOptions.Shard: the ring member of this replica, nil when the operator
// is not sharded.
func (r *ClusterResolver) Shard() *shard.Member { return r.opts.Shard }

// TargetOf returns the target of the pass ctx belongs to ([TargetFrom]), and the
// management cluster ([ClusterResolver.Local]) for a step run outside a pass. Inside a
// pass it does not touch r, so a step under test may run on a nil resolver with the
// target in its context ([WithTarget]).
func (r *ClusterResolver) TargetOf(ctx context.Context) *Target {
	if t := TargetFrom(ctx); t != nil {
		return t
	}
	return r.Local()
}

// Resolve returns the management cluster for a nil ref or an empty name. For a target
// cluster it checks, in this order, and returns an *UnavailableError naming the cluster
// for the first that fails:
//
//   - the manager has target clusters (a clusters namespace) and its provider is the
//     one [NewManager] builds;
//   - a Secret of ref.Name labelled [KubeconfigSecretLabel]=true registers it in the
//     clusters namespace (read from the manager's cache, no request);
//   - the CR's namespace, from ctx ([WithNamespace]; [LocalReconciler], [OnTarget] and
//     [Cleanup] put it there), is listed in the Secret's [AllowedNamespacesAnnotation]
//     (the error wraps [ErrNamespaceNotAllowed]); a context without one is refused;
//   - the Secret's kubeconfig passes the manager's [KubeconfigOptions] (the error
//     wraps [ErrKubeconfigRefused] and names the Secret and the refused fields);
//   - the provider engaged the cluster, and it answers (at most one GET /version per
//     cluster and ReachabilityTTL).
func (r *ClusterResolver) Resolve(ctx context.Context, ref *commonv1.TargetClusterRefSpec) (*Target, error) {
	if ref == nil || ref.Name == "" {
		return r.local, nil
	}
	name := ref.Name
	provider := r.mgr.GetProvider()
	if provider == nil {
		return nil, &UnavailableError{Cluster: name,
			Reason: "is not registered: the operator runs without target clusters (no clusters namespace is set)"}
	}
	secrets, ok := provider.(*secretProvider)
	if !ok {
		return nil, &UnavailableError{Cluster: name, Reason: "is refused: the manager's cluster provider is not the one " +
			"multicluster.NewManager builds, so no kubeconfig Secret says which namespaces may use it"}
	}
	secret, err := secrets.registration(ctx, r.mgr.GetLocalManager().GetClient(), name)
	if err != nil {
		return nil, &UnavailableError{Cluster: name, Reason: "cannot be checked", Err: err}
	}
	if secret == nil {
		return nil, &UnavailableError{Cluster: name, Reason: "is not registered (no kubeconfig Secret of that name labelled " +
			KubeconfigSecretLabel + "=true in the clusters namespace)"}
	}
	namespace, ok := NamespaceFrom(ctx)
	if !ok {
		return nil, &UnavailableError{Cluster: name, Reason: "may not be used", Err: &refusal{sentinel: ErrNamespaceNotAllowed,
			msg: "the CR's namespace is not known (resolve within a pass of LocalReconciler or OnTarget, or with multicluster.WithNamespace)"}}
	}
	if err := allowedNamespaces(secret, namespace); err != nil {
		return nil, &UnavailableError{Cluster: name, Reason: fmt.Sprintf("may not be used from namespace %q", namespace), Err: err}
	}
	if err := secrets.vet(secret); err != nil {
		return nil, &UnavailableError{Cluster: name, Reason: "is refused", Err: err}
	}
	cl, err := r.mgr.GetCluster(ctx, mcmulticluster.ClusterName(name))
	if err != nil {
		if errors.Is(err, mcmulticluster.ErrClusterNotFound) {
			return nil, &UnavailableError{Cluster: name, Reason: "is not registered yet (its kubeconfig Secret is accepted; " +
				"the cluster is engaged once its API server answers)"}
		}
		return nil, &UnavailableError{Cluster: name, Reason: "is not registered", Err: err}
	}
	rt, err := r.remoteTarget(name, cl)
	if err != nil {
		return nil, &UnavailableError{Cluster: name, Reason: "cannot be reached", Err: err}
	}
	if err := r.probe(ctx, name, rt); err != nil {
		return nil, &UnavailableError{Cluster: name, Reason: "does not answer", Err: err}
	}
	return rt.target, nil
}

// remoteTarget returns the cached target of cl, building it when the provider engaged a
// new cluster under name. A target built for a cl that is not live (the provider made it
// gettable before the manager engaged it, its engagement failed, or it was disengaged
// since the caller got it) is returned but not cached, so that nothing of a removed
// cluster stays in the resolver.
func (r *ClusterResolver) remoteTarget(name string, cl cluster.Cluster) (*remoteTarget, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rt, ok := r.targets[name]; ok && rt.cluster == cl {
		return rt, nil
	}
	cfg := rest.CopyConfig(cl.GetConfig())
	cfg.Timeout = r.opts.ProbeTimeout
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	opts := r.opts.Applier
	opts.Remote = &r.remote
	opts.APIReader = cl.GetAPIReader()
	if p, ok := r.mgr.GetProvider().(*secretProvider); ok && p.shard != nil {
		// The cluster's children informers hold only the member's buckets
		// (ManagerOptions.Shard): a miss is confirmed, and the children carry the bucket.
		opts.SelectedCache = true
		if opts.OwnerLabels == nil {
			opts.OwnerLabels = shard.OwnerLabels
		}
	}
	rt := &remoteTarget{
		cluster:   cl,
		discovery: dc.RESTClient(),
		target: &Target{
			Name:       name,
			Client:     apply.NewApplier(cl.GetClient(), opts),
			APIReader:  cl.GetAPIReader(),
			RESTMapper: cl.GetRESTMapper(),
			Ownership:  &r.remote,
		},
	}
	if r.live[cl] {
		r.targets[name] = rt
	}
	return rt, nil
}

// probe asks the cluster's /version unless it answered within ReachabilityTTL.
func (r *ClusterResolver) probe(ctx context.Context, name string, rt *remoteTarget) error {
	r.mu.Lock()
	fresh := r.now().Sub(rt.answered) < r.opts.ReachabilityTTL
	r.mu.Unlock()
	if fresh {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.ProbeTimeout)
	defer cancel()
	if err := rt.discovery.Get().AbsPath("/version").Do(ctx).Error(); err != nil {
		return err
	}
	r.mu.Lock()
	if cur, ok := r.targets[name]; ok && cur == rt {
		rt.answered = r.now()
	}
	r.mu.Unlock()
	return nil
}
