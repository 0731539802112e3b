package multicluster

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmulticluster "sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/capability"
	"github.com/c5c3/reconciler-sdk/shard"
)

// TargetClusterFunc names the target cluster of the CR at key on the management
// cluster: "" when the CR keeps its children on the management cluster. found is false
// when the CR cannot be read (it is gone, or the read failed): the watches then enqueue
// nothing for it. Build one with [TargetClusterOf].
type TargetClusterFunc func(ctx context.Context, key client.ObjectKey) (cluster string, found bool)

// TargetClusterOf returns the [TargetClusterFunc] of a CR kind: it reads the CR through
// r (the manager's cached client, so no request is sent) into newObj() and returns
// ref(cr)'s name. Read errors other than NotFound are logged through the context's
// logger. TargetClusterOf panics when an argument is nil, so a wiring mistake fails at
// manager setup, not on the first event.
func TargetClusterOf[T client.Object](r client.Reader, newObj func() T, ref func(T) *commonv1.TargetClusterRefSpec) TargetClusterFunc {
	if r == nil || newObj == nil || ref == nil {
		panic("multicluster: TargetClusterOf: reader, newObj and ref must not be nil")
	}
	return func(ctx context.Context, key client.ObjectKey) (string, bool) {
		cr := newObj()
		if err := r.Get(ctx, key, cr); err != nil {
			if !apierrors.IsNotFound(err) {
				log.FromContext(ctx).Error(err, "watch could not read the CR to map an event", "cr", key)
			}
			return "", false
		}
		if t := ref(cr); t != nil {
			return t.Name, true
		}
		return "", true
	}
}

// AddInputWatch registers the two legs of a watch on an input the CRs read: a kind such
// as a SecretStore that exists on the management cluster for the CRs without a target
// cluster and on each target cluster for the CRs that name it.
//
//   - The local leg watches input on the management cluster and enqueues the requests
//     mapFn returns for the CRs whose target cluster is "".
//   - The remote leg watches input on every engaged target cluster that serves its kind
//     and enqueues the requests mapFn returns for the CRs that name that cluster. A
//     target cluster that does not serve the kind (its CRD is not installed there) is
//     not watched, so it cannot break the engagement of the cluster; the kind is asked
//     when the cluster engages (capability.IsKindServed on the cluster's RESTMapper).
//
// mapFn maps an event to requests for CRs on the management cluster (it lists through
// the management cluster's reader); targets tells each CR's target cluster. The input's
// kind is resolved through scheme; an error resolving it is returned as
// "resolving input kind for remote watch: <cause>" with a nil builder. The requests are
// always for the management cluster (mcreconcile.Request with an empty ClusterName).
func AddInputWatch(b *mcbuilder.Builder, scheme *runtime.Scheme, targets TargetClusterFunc, input client.Object, mapFn handler.MapFunc) (*mcbuilder.Builder, error) {
	if b == nil || targets == nil || mapFn == nil || input == nil {
		return nil, fmt.Errorf("%w: AddInputWatch needs a builder, a TargetClusterFunc, an input object and a map function", ErrInvalidOptions)
	}
	if err := apply.CheckScheme(scheme); err != nil {
		return nil, fmt.Errorf("resolving input kind for remote watch: %w", err)
	}
	gvk, err := apiutil.GVKForObject(input, scheme)
	if err != nil {
		return nil, fmt.Errorf("resolving input kind for remote watch: %w", err)
	}
	b = b.Watches(input, inputHandler(targets, mapFn),
		mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false))
	b = b.Watches(input, inputHandler(targets, mapFn),
		mcbuilder.WithEngageWithLocalCluster(false), mcbuilder.WithEngageWithProviderClusters(true),
		mcbuilder.WithClusterFilter(servedOn(gvk, nil)))
	return b, nil
}

// inputHandler maps an input event on cluster name to the management-cluster requests
// of the CRs whose target cluster is name.
func inputHandler(targets TargetClusterFunc, mapFn handler.MapFunc) func(mcmulticluster.ClusterName, cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	return func(name mcmulticluster.ClusterName, _ cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
		return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []mcreconcile.Request {
			var out []mcreconcile.Request
			for _, req := range mapFn(ctx, obj) {
				if target, found := targets(ctx, req.NamespacedName); found && target == string(name) {
					out = append(out, mcreconcile.Request{Request: req})
				}
			}
			return out
		})
	}
}

// AddChildWatches watches the children a CR writes to target clusters: an event on a
// child of one of children's kinds, on any engaged target cluster that serves the kind,
// enqueues the CR that claims it (apply.ClaimOf) when the claim names owner's kind and
// this management cluster (remote.ManagementCluster). A child claimed by another
// management cluster, by another kind or by nobody enqueues nothing, so an edit on the
// target is repaired by the owning CR's next pass. Children on the management cluster
// are watched as usual with Owns.
//
// owner is an object of the CR kind (its kind is resolved through scheme). Errors
// resolving a kind return a nil builder.
func AddChildWatches(b *mcbuilder.Builder, scheme *runtime.Scheme, owner client.Object, remote apply.RemoteOwnership, children ...client.Object) (*mcbuilder.Builder, error) {
	return addChildWatches(b, scheme, owner, remote, nil, children...)
}

// addChildWatches is [AddChildWatches]; with a member, each child kind a target cluster
// serves is registered with it (shard.Member.SelectOwned, by the resource the target's
// RESTMapper names) as the cluster engages, before the watch's informer starts.
func addChildWatches(b *mcbuilder.Builder, scheme *runtime.Scheme, owner client.Object, remote apply.RemoteOwnership,
	member *shard.Member, children ...client.Object) (*mcbuilder.Builder, error) {
	if b == nil || owner == nil {
		return nil, fmt.Errorf("%w: AddChildWatches needs a builder and an owner object", ErrInvalidOptions)
	}
	if err := remote.Validate(); err != nil {
		return nil, fmt.Errorf("%w: AddChildWatches: %w", ErrInvalidOptions, err)
	}
	if err := apply.CheckScheme(scheme); err != nil {
		return nil, fmt.Errorf("resolving owner kind for child watch: %w", err)
	}
	ownerGVK, err := apiutil.GVKForObject(owner, scheme)
	if err != nil {
		return nil, fmt.Errorf("resolving owner kind for child watch: %w", err)
	}
	claimed := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		_, ok := obj.GetLabels()[apply.OwnerClusterLabel]
		return ok
	})
	for _, child := range children {
		gvk, err := apiutil.GVKForObject(child, scheme)
		if err != nil {
			return nil, fmt.Errorf("resolving child kind for remote watch: %w", err)
		}
		b = b.Watches(child, childHandler(ownerGVK.GroupKind(), remote.ManagementCluster),
			mcbuilder.WithEngageWithLocalCluster(false), mcbuilder.WithEngageWithProviderClusters(true),
			mcbuilder.WithClusterFilter(servedOn(gvk, member)), mcbuilder.WithPredicates(claimed))
	}
	return b, nil
}

func childHandler(owner schema.GroupKind, managementCluster string) func(mcmulticluster.ClusterName, cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	return func(mcmulticluster.ClusterName, cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
		return handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []mcreconcile.Request {
			claim, ok := apply.ClaimOf(obj)
			if !ok || claim.ManagementCluster != managementCluster || claim.GroupKind != owner {
				return nil
			}
			return []mcreconcile.Request{{Request: crreconcile.Request{NamespacedName: client.ObjectKey{
				Namespace: claim.Namespace, Name: claim.Name}}}}
		})
	}
}

// servedOn engages a cluster only when it serves gvk; a probe error is logged and the
// cluster is not engaged for that watch. With a member, the resource of gvk on a
// cluster that serves it is added to the member's children kinds
// (shard.Member.SelectOwned) before the watch starts.
func servedOn(gvk schema.GroupVersionKind, member *shard.Member) mcbuilder.ClusterFilterFunc {
	return func(name mcmulticluster.ClusterName, cl cluster.Cluster) bool {
		mapping, err := kindMapping(cl.GetRESTMapper(), gvk)
		if err != nil {
			log.Log.WithName("multicluster").Error(err, "not watching kind on target cluster", "cluster", name, "kind", gvk)
		}
		if mapping == nil {
			return false
		}
		if member != nil {
			member.SelectOwned(mapping.Resource.GroupResource())
		}
		return true
	}
}

// kindMapping returns the REST mapping of gvk when mapper serves it, nil when it does
// not, and an error (capability.IsKindServed's) when that cannot be told. A served kind
// costs one lookup; capability.IsKindServed classifies only a failed one.
func kindMapping(mapper meta.RESTMapper, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	if mapper != nil && gvk.Version != "" && gvk.Kind != "" {
		if mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			return mapping, nil
		}
	}
	served, err := capability.IsKindServed(mapper, gvk)
	if err != nil || !served {
		return nil, err
	}
	// Served on a second look (discovery caught up): map it again.
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("resource of %s: %w", gvk, err)
	}
	return mapping, nil
}

// LocalReconciler adapts a controller-runtime reconciler of CRs on the management
// cluster to the multicluster builder's request type. Every watch this package registers
// enqueues requests for the management cluster; a request for another cluster (a For
// or Owns left engaged with the target clusters) is logged and dropped. r runs with the
// request's namespace in its context ([WithNamespace]), the namespace a
// [ClusterResolver] checks a target cluster's allowed namespaces against.
func LocalReconciler(r crreconcile.Reconciler) mcreconcile.Reconciler {
	return mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
		if req.ClusterName != "" {
			log.FromContext(ctx).Info("dropping a request for a CR on a target cluster: engage For and Owns with the local cluster only",
				"cluster", req.ClusterName, "request", req.Request)
			return ctrl.Result{}, nil
		}
		return r.Reconcile(WithNamespace(ctx, req.Namespace), req.Request)
	})
}

// AddOwnedWatches watches the children the CRs control on the management cluster:
// one Owns per kind of owned, engaged with the management cluster only (children on
// target clusters are watched with AddChildWatches). A kind the management cluster
// does not serve when the controller is set up (an optional CRD such as the Gateway
// API's HTTPRoute or the VerticalPodAutoscaler that is not installed) is not watched,
// so the controller starts without it, and its GroupVersionKind is returned in
// notServed for the caller to log; the flows that write such a kind report its absence
// on the CR (for example GatewayAPINotInstalled) instead of failing.
//
// The kinds are resolved through scheme and asked of mapper (the management cluster's
// RESTMapper, mgr.GetLocalManager().GetRESTMapper()) with capability.IsKindServed.
// A kind that cannot be resolved, or a discovery failure, returns a nil builder and the
// error, naming the kind.
func AddOwnedWatches(b *mcbuilder.Builder, scheme *runtime.Scheme, mapper meta.RESTMapper, owned ...client.Object) (_ *mcbuilder.Builder, notServed []schema.GroupVersionKind, _ error) {
	if b == nil || mapper == nil {
		return nil, nil, fmt.Errorf("%w: AddOwnedWatches needs a builder and a RESTMapper", ErrInvalidOptions)
	}
	if err := apply.CheckScheme(scheme); err != nil {
		return nil, nil, fmt.Errorf("resolving owned kind: %w", err)
	}
	for _, obj := range owned {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			return nil, nil, fmt.Errorf("resolving owned kind: %w", err)
		}
		served, err := capability.IsKindServed(mapper, gvk)
		if err != nil {
			return nil, nil, fmt.Errorf("asking the management cluster for %s: %w", gvk.Kind, err)
		}
		if !served {
			notServed = append(notServed, gvk)
			continue
		}
		b = b.Owns(obj, mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false))
	}
	return b, notServed, nil
}
