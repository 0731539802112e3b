package multicluster

import (
	"context"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/health"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/shard"
)

// ReconcilerOptions are the options every reconciler of a custom resource kind T on a
// [CRReconciler] takes; an operator's Options embed them next to its own. Fill the
// health-check defaults with [ReconcilerOptions.Default].
type ReconcilerOptions[T reconcile.Object] struct {
	// FieldManager is the operator's field manager; it must match the FieldManager of
	// the Appliers the resolver builds (ResolverOptions.Applier).
	FieldManager string
	// NamespaceScoped is set when the operator runs with --namespace: its Role cannot
	// read a ClusterSecretStore, so a CR that selects one is refused with
	// ClusterSecretStoreUnsupported, and no ClusterSecretStore watch is registered.
	NamespaceScoped bool
	// Metrics records the step durations and errors; nil records none.
	Metrics *reconcile.Metrics
	// Prober runs the health-check step; nil means the one [ReconcilerOptions.Default]
	// builds.
	Prober *health.Prober
	// Outbound is the policy of the default Prober's requests (package outbound): a
	// probe of a loopback, link-local, unspecified or multicast address is refused, and
	// so is a redirect to another host. Tests with a local stand-in allow loopback.
	Outbound outbound.Policy
	// ProbeURL returns the URL the health check requests for a CR; nil means the
	// default of [ReconcilerOptions.Default]. Tests and demos without cluster DNS point
	// it at a local server.
	ProbeURL func(T) string
	// ProbeBase, when set and ProbeURL is nil, makes the default ProbeURL request the
	// health check's path below ProbeBase instead of below the CR's endpoint, once the
	// CR has published one: for an operator outside the cluster network, or a local
	// stand-in of the endpoint. It must be an absolute http or https URL without user
	// info, query or fragment; --health-check-base-url ([ReconcilerOptions.BindFlags])
	// sets it.
	ProbeBase string
	// Recorder records the target-cluster sweep's events on the CR; nil records none.
	Recorder events.EventRecorder
	// Cleanup sweeps the children a CR left on a target cluster; nil means the one
	// [NewCRReconciler] builds from the pipeline's owned kinds and Recorder.
	Cleanup *Cleanup
	// Wrap, when set, wraps the reconciler [CRReconciler.Complete] registers, so that a
	// test harness (the conformance suite's RunOptions.Wrap) observes every pass.
	Wrap func(crreconcile.Reconciler) crreconcile.Reconciler
}

// HealthCheck is a CR kind's health check, from which [ReconcilerOptions.Default]
// builds the default Prober and ProbeURL: a GET of Path below the endpoint the CR
// publishes (Endpoint, health.EndpointURL), its 2xx answers judged by Validate.
type HealthCheck[T any] struct {
	Path     string
	Endpoint func(T) string
	Validate func(status int, header http.Header, body []byte) error
}

// Default checks o and fills the health check's defaults from check: an empty
// FieldManager is an error wrapping [ErrInvalidOptions]; a nil Prober becomes one with
// health.DefaultOptions, check.Validate and Outbound; a nil ProbeURL requests
// check.Path below check.Endpoint (below ProbeBase when that is set; a ProbeBase that
// is not an absolute http or https URL without user info, query or fragment is an error
// wrapping [ErrInvalidOptions]).
func (o *ReconcilerOptions[T]) Default(check HealthCheck[T]) error {
	if o.FieldManager == "" {
		return fmt.Errorf("%w: Options.FieldManager is empty", ErrInvalidOptions)
	}
	if o.Prober == nil {
		po := health.DefaultOptions()
		po.Validate, po.Outbound = check.Validate, o.Outbound
		o.Prober = health.NewProber(po)
	}
	if o.ProbeURL == nil {
		if check.Endpoint == nil {
			return fmt.Errorf("%w: HealthCheck.Endpoint is nil and Options.ProbeURL unset", ErrInvalidOptions)
		}
		base, err := o.probeBase()
		if err != nil {
			return err
		}
		endpoint := check.Endpoint
		o.ProbeURL = func(obj T) string {
			if base != "" && endpoint(obj) != "" {
				return base + check.Path
			}
			return health.EndpointURL(endpoint(obj), check.Path)
		}
	}
	return nil
}

// CRKind describes a custom resource kind T to [NewCRReconciler].
type CRKind[T reconcile.Object] struct {
	// Name names the controller (the builder's Named).
	Name string
	// New returns an empty T.
	New func() T
	// TargetClusterRef returns the CR's spec.targetClusterRef (nil: the management
	// cluster).
	TargetClusterRef func(T) *commonv1.TargetClusterRefSpec
	// GateCondition is the condition that carries TargetClusterUnavailable ([OnTarget]).
	GateCondition string
	// ObservedGeneration, when set, points at the CR's status.observedGeneration: every
	// pass first records there the generation it observes.
	ObservedGeneration func(T) *int64
	// Prepare, when set, runs next on the CR as read and returns the context the steps
	// run with (such as reconcile.WithState's, values the steps of one pass share).
	Prepare func(ctx context.Context, obj T) context.Context
}

// CRReconciler is the reconciler of a custom resource kind T whose children may land
// on a target cluster: every pass is [OnTarget] around the pipeline, run by
// reconcile.RunPass with the target's pass options, and the watches derive from the
// pipeline's owned kinds. An operator's Reconciler embeds it next to its steps.
type CRReconciler[T reconcile.Object] struct {
	kind     CRKind[T]
	client   client.Client
	resolver *ClusterResolver
	cleanup  *Cleanup
	pipeline *reconcile.Pipeline[T]
	children []client.ObjectList
	passOpts reconcile.PassOptions
	wrap     func(crreconcile.Reconciler) crreconcile.Reconciler
}

// NewCRReconciler returns the [CRReconciler] of kind running pipeline on resolver (its
// Local().Client, an apply.Applier, reads and writes the CRs), with opts' Cleanup (or
// one of the pipeline's owned kinds and opts.Recorder) and Wrap. A nil resolver or
// pipeline, or a kind without New, TargetClusterRef or GateCondition, is an error
// wrapping [ErrInvalidOptions]; so is an owned kind the scheme does not know.
func NewCRReconciler[T reconcile.Object](resolver *ClusterResolver, pipeline *reconcile.Pipeline[T], kind CRKind[T],
	opts ReconcilerOptions[T]) (*CRReconciler[T], error) {
	if resolver == nil || pipeline == nil {
		return nil, fmt.Errorf("%w: a resolver and a pipeline are required", ErrInvalidOptions)
	}
	if kind.New == nil || kind.TargetClusterRef == nil || kind.GateCondition == "" {
		return nil, fmt.Errorf("%w: CRKind %q needs New, TargetClusterRef and GateCondition", ErrInvalidOptions, kind.Name)
	}
	local := resolver.Local()
	children, err := pipeline.OwnedLists(local.Client.Scheme())
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidOptions, kind.Name, err)
	}
	r := &CRReconciler[T]{kind: kind, client: local.Client, resolver: resolver, cleanup: opts.Cleanup,
		pipeline: pipeline, children: children, passOpts: local.PassOptions(pipeline.Conditions()...), wrap: opts.Wrap}
	if r.cleanup == nil {
		if r.cleanup, err = NewCleanup(resolver, CleanupOptions{
			Children: children, Recorder: opts.Recorder, ConditionType: reconcile.ConditionReady}); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Pipeline returns the pipeline every pass runs.
func (r *CRReconciler[T]) Pipeline() *reconcile.Pipeline[T] { return r.pipeline }

// Children returns the kinds the CRs write (the pipeline's owned kinds), as fresh empty
// lists: the kinds the target-cluster sweep deletes.
func (r *CRReconciler[T]) Children() []client.ObjectList {
	out := make([]client.ObjectList, 0, len(r.children))
	for _, l := range r.children {
		out = append(out, l.DeepCopyObject().(client.ObjectList))
	}
	return out
}

// Reconcile runs one pass for the CR req names: ObservedGeneration and Prepare, then
// the pipeline behind [OnTarget] (the sweep of a deleted CR, TargetClusterUnavailable
// ahead of every step, the finalizer of a target cluster). The status is written on
// every exit path, and only when it changed.
func (r *CRReconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcile.RunPass(ctx, r.client, req.NamespacedName, r.kind.New(), r.passOpts, r.pass)
}

// pass is one pass on the CR as read.
func (r *CRReconciler[T]) pass(ctx context.Context, obj T) (ctrl.Result, error) {
	if r.kind.ObservedGeneration != nil {
		*r.kind.ObservedGeneration(obj) = obj.GetGeneration()
	}
	if r.kind.Prepare != nil {
		ctx = r.kind.Prepare(ctx, obj)
	}
	return OnTarget(ctx, r.client, r.cleanup, obj, r.kind.TargetClusterRef(obj), r.kind.GateCondition, r.pipeline.Run)
}

// TargetOf returns the cluster a step of the current pass writes to ([TargetFrom]);
// outside a pass, the management cluster. With a target in ctx ([WithTarget]) it does
// not touch r, so a step under test may run on a nil CRReconciler.
func (r *CRReconciler[T]) TargetOf(ctx context.Context) *Target {
	if t := TargetFrom(ctx); t != nil {
		return t
	}
	return r.resolver.Local()
}

// TargetClusters returns the [TargetClusterFunc] of the kind, reading the CRs through
// mgr's cached management-cluster client: what the input watches take.
func (r *CRReconciler[T]) TargetClusters(mgr mcmanager.Manager) TargetClusterFunc {
	return TargetClusterOf(mgr.GetLocalManager().GetClient(), r.kind.New, r.kind.TargetClusterRef)
}

// NewController starts the kind's controller on mgr (built with [NewManager], the
// resolver's manager): multicluster-runtime's builder Named kind.Name with
// [ControllerOptions]; For the kind on the management cluster only, blind to the
// operator's own status writes (reconcile.IgnoreStatusWrites); [AddOwnedWatches] of the
// pipeline's owned kinds, each kind the management cluster does not serve logged
// through ctx's logger and left unwatched; and [AddChildWatches] of the same kinds on
// the target clusters. With the resolver's shard member every owned kind is registered
// with it (shard.Member.SelectOwned), on the management cluster and on each target
// cluster as it engages, so a transport of the member narrows their informers to its
// buckets. Add the input watches to the builder, then [CRReconciler.Complete].
func (r *CRReconciler[T]) NewController(ctx context.Context, mgr mcmanager.Manager) (*mcbuilder.Builder, error) {
	local := mgr.GetLocalManager()
	b := mcbuilder.ControllerManagedBy(mgr).Named(r.kind.Name).WithOptions(ControllerOptions(mgr)).
		For(r.kind.New(), mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false),
			mcbuilder.WithPredicates(reconcile.IgnoreStatusWrites()))
	owned := r.pipeline.Owned()
	b, notServed, err := AddOwnedWatches(b, local.GetScheme(), local.GetRESTMapper(), owned...)
	if err != nil {
		return nil, err
	}
	for _, gvk := range notServed {
		log.FromContext(ctx).Info("kind not served by the management cluster: not watched", "kind", gvk)
	}
	m := r.resolver.Shard()
	if m != nil {
		if b, err = r.shardWatch(b, m, local, owned); err != nil {
			return nil, err
		}
	}
	return addChildWatches(b, local.GetScheme(), r.kind.New(), r.resolver.Remote(), m, owned...)
}

// shardWatch registers the owned kinds with the member (shard.Member.SelectOwned: a
// transport that narrows children then selects their informers by the bucket label),
// by the resource the management cluster's RESTMapper names, or, for a kind it does not
// serve, by the resource its kind's name guesses (meta.UnsafeGuessKindToResource), so
// that a target cluster's informer of it is narrowed even when a pass reads the kind
// before the child watch engages the cluster (which registers the resource the target
// cluster names). It makes the CR kind's informer hold only the member's slice when the
// member shards on the server (its selector then names the kind), and otherwise
// watches shard.RequeueFor, which enqueues the CRs of the ranges the member gains.
func (r *CRReconciler[T]) shardWatch(b *mcbuilder.Builder, m *shard.Member, local ctrl.Manager, owned []client.Object) (*mcbuilder.Builder, error) {
	gvk, err := apiutil.GVKForObject(r.kind.New(), local.GetScheme())
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidOptions, r.kind.Name, err)
	}
	for _, obj := range owned {
		ogvk, err := apiutil.GVKForObject(obj, local.GetScheme())
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalidOptions, r.kind.Name, err)
		}
		if mapping, err := local.GetRESTMapper().RESTMapping(ogvk.GroupKind(), ogvk.Version); err == nil {
			m.SelectOwned(mapping.Resource.GroupResource())
		} else {
			plural, _ := meta.UnsafeGuessKindToResource(ogvk)
			m.SelectOwned(plural.GroupResource())
		}
	}
	if m.ServerSide() {
		mapping, err := local.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("%s: the resource of %s: %w", r.kind.Name, gvk, err)
		}
		m.Select(mapping.Resource.GroupResource())
		return b, nil
	}
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	newList := func() client.ObjectList {
		list, _ := local.GetScheme().New(listGVK)
		l, _ := list.(client.ObjectList)
		return l
	}
	if newList() == nil {
		return nil, fmt.Errorf("%w: %s: no %s in the scheme", ErrInvalidOptions, r.kind.Name, listGVK)
	}
	return b.WatchesRawSource(shard.RequeueFor(m, local.GetClient(), newList, func(key client.ObjectKey) mcreconcile.Request {
		return mcreconcile.Request{Request: crreconcile.Request{NamespacedName: key}}
	})), nil
}

// Complete registers r on b through [LocalReconciler], wrapped by
// ReconcilerOptions.Wrap when that is set, and gated by the resolver's shard member
// (shard.Gate: only the CRs of its ranges) when the operator is sharded.
func (r *CRReconciler[T]) Complete(b *mcbuilder.Builder) error {
	var rec crreconcile.Reconciler = r
	if r.wrap != nil {
		rec = r.wrap(r)
	}
	if m := r.resolver.Shard(); m != nil {
		rec = shard.Gate(m, r.client, r.kind.New, rec)
	}
	return b.Complete(LocalReconciler(rec))
}
