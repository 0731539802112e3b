package multicluster

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// TargetClusterUnavailable is the reason [TargetGate] sets, ahead of any other work,
// when spec.targetClusterRef names a cluster that is not registered, does not answer,
// is refused ([KubeconfigOptions]) or may not be used from the CR's namespace
// ([AllowedNamespacesAnnotation]); the message is the resolver's error.
const TargetClusterUnavailable = "TargetClusterUnavailable"

// ErrTargetClusterUnavailable is wrapped by every error a [Resolver] returns for a
// target cluster that is not registered, does not answer, is refused or may not be
// used from the CR's namespace. Test with errors.Is.
var ErrTargetClusterUnavailable = errors.New("target cluster unavailable")

// Target is the cluster a CR's children are written to: the management cluster (Name
// "") or a registered target cluster.
type Target struct {
	// Name is the registered name of the target cluster; "" for the management cluster.
	Name string
	// Client reads and writes the children on that cluster. On a target cluster it is
	// an apply.Applier configured with remote ownership: children are claimed with
	// ownership labels, never with an owner reference the cluster cannot resolve.
	Client client.Client
	// APIReader reads past the cluster's informer cache.
	APIReader client.Reader
	// RESTMapper answers "is this kind served" for that cluster (see package capability).
	RESTMapper meta.RESTMapper
	// Ownership is how children are claimed on a target cluster; nil on the management
	// cluster, where they carry a controller owner reference.
	Ownership *apply.RemoteOwnership
}

// IsLocal reports whether t is the management cluster.
func (t *Target) IsLocal() bool { return t.Name == "" }

// Recheck is the result a converged pass returns: zero on the management cluster, a
// requeue after [RetryInterval] on a target cluster, so that a target API server that
// stops answering (which sends no event) is noticed. Such a pass costs no write and,
// within the resolver's ReachabilityTTL, no request.
func (t *Target) Recheck() ctrl.Result {
	if t.IsLocal() {
		return ctrl.Result{}
	}
	return ctrl.Result{RequeueAfter: RetryInterval}
}

// PassOptions returns reconcile.DefaultPassOptions(conditions...) with t's APIReader,
// for a reconciler whose CR lives on t (the management cluster, [ClusterResolver.Local]):
// reconcile.RunPass then re-reads the CR past the cache after a conflicting status
// write, and tells a deleted CR from one whose kind has no status subresource without
// trusting a cache that lags.
func (t *Target) PassOptions(conditions ...string) reconcile.PassOptions {
	opts := reconcile.DefaultPassOptions(conditions...)
	opts.APIReader = t.APIReader
	return opts
}

// Resolver turns a CR's spec.targetClusterRef into the cluster its children land on.
// A nil ref (or an empty name) is the management cluster. A ref that is not registered,
// no longer answers, or may not be used by the CR (the CR's namespace is in ctx,
// [WithNamespace]) returns an error wrapping [ErrTargetClusterUnavailable] whose text
// says which cluster and why; callers report it under [TargetClusterUnavailable].
type Resolver interface {
	Resolve(ctx context.Context, ref *commonv1.TargetClusterRefSpec) (*Target, error)
}

type targetKey struct{}

// WithTarget returns a copy of ctx that carries t, so that the steps of a pipeline,
// which see only the context and the CR, write to the cluster [TargetGate] resolved:
//
//	g, err := multicluster.TargetGate(ctx, r.resolver, cr, "Ready", cr.Spec.TargetClusterRef)
//	if g.Target == nil {
//		return reconcile.Settle(cr, g.Outcome, err)
//	}
//	return r.pipeline.Run(multicluster.WithTarget(ctx, g.Target), cr)
func WithTarget(ctx context.Context, t *Target) context.Context {
	return context.WithValue(ctx, targetKey{}, t)
}

// TargetFrom returns the Target [WithTarget] put into ctx, or nil when there is none.
func TargetFrom(ctx context.Context) *Target {
	t, _ := ctx.Value(targetKey{}).(*Target)
	return t
}

type namespaceKey struct{}

// WithNamespace returns a copy of ctx that carries namespace, the namespace of the CR a
// pass is for. A [ClusterResolver] resolves a target cluster only for a namespace its
// kubeconfig Secret lists ([AllowedNamespacesAnnotation]), and takes that namespace
// from the context: [LocalReconciler] puts the request's namespace there, [OnTarget]
// and [Cleanup] the CR's, so a pass wired as this package describes needs nothing
// more. Call it when resolving outside such a pass.
func WithNamespace(ctx context.Context, namespace string) context.Context {
	return context.WithValue(ctx, namespaceKey{}, namespace)
}

// NamespaceFrom returns the namespace [WithNamespace] put into ctx, and whether there is
// one.
func NamespaceFrom(ctx context.Context) (string, bool) {
	ns, ok := ctx.Value(namespaceKey{}).(string)
	return ns, ok
}
