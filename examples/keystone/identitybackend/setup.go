package identitybackend

import (
	"cmp"
	"context"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mchandler "sigs.k8s.io/multicluster-runtime/pkg/handler"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// SetupWithManager registers the KeystoneIdentityBackend controller on mgr (built with
// multicluster.NewManager; the resolver of NewReconciler must come from
// the same manager). It watches:
//
//   - KeystoneIdentityBackends (not the controller's own status writes);
//   - Keystones, each event enqueueing the backends that name the Keystone (its
//     endpoint appears, it is created after its backends, it moves to another cluster);
//   - Deployments, on the management cluster for the Keystones without a target
//     cluster and on each target cluster for the Keystones that name it
//     (multicluster.AddInputWatch), each event enqueueing the backends of the Keystone
//     of the Deployment's name: a rollout that finishes sets ConfigProjected without
//     waiting for the poll.
//
// The users' bind password Secrets and the admin password Secret raise no event of
// their own (the operator caches only the Secrets it writes): a backend that waits for
// one polls every Options.PollInterval.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr mcmanager.Manager) error {
	local := mgr.GetLocalManager()
	if r.opts.Recorder == nil {
		r.opts.Recorder = local.GetEventRecorder("keystoneidentitybackend")
	}
	reader := local.GetClient()
	toBackends := backendsOfKeystoneNamed(reader)
	b := mcbuilder.ControllerManagedBy(mgr).Named("keystoneidentitybackend").WithOptions(multicluster.ControllerOptions(mgr)).
		For(&v1alpha1.KeystoneIdentityBackend{}, mcbuilder.WithEngageWithLocalCluster(true),
			mcbuilder.WithEngageWithProviderClusters(false), mcbuilder.WithPredicates(reconcile.IgnoreStatusWrites())).
		Watches(&v1alpha1.Keystone{}, mchandler.EnqueueRequestsFromMapFunc(toBackends),
			mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false))
	b, err := multicluster.AddInputWatch(b, local.GetScheme(), backendTargetCluster(reader), &appsv1.Deployment{}, toBackends)
	if err != nil {
		return err
	}
	log.FromContext(ctx).V(1).Info("KeystoneIdentityBackend controller set up")
	return b.Complete(multicluster.LocalReconciler(r))
}

// MapToKeystone is the map function of the Keystone controller's watch on
// KeystoneIdentityBackends: a backend enqueues the Keystone it names. Register it
// without a status predicate (DomainReady, the gate the IdentityBackends row reads, is
// status), engaged with the management cluster only:
//
//	b = b.Watches(&v1alpha1.KeystoneIdentityBackend{},
//		mchandler.EnqueueRequestsFromMapFunc(identitybackend.MapToKeystone),
//		mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false))
func MapToKeystone(_ context.Context, obj client.Object) []crreconcile.Request {
	b, ok := obj.(*v1alpha1.KeystoneIdentityBackend)
	if !ok || b.Spec.KeystoneRef.Name == "" {
		return nil
	}
	return []crreconcile.Request{{NamespacedName: client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.KeystoneRef.Name}}}
}

// backendsOfKeystoneNamed maps an object named like a Keystone (the Keystone itself, or
// its Deployment, which carries the Keystone's name) to the backends of its namespace
// that name it, sorted by name. It lists through r, the manager's cached client.
func backendsOfKeystoneNamed(r client.Reader) func(ctx context.Context, obj client.Object) []crreconcile.Request {
	return func(ctx context.Context, obj client.Object) []crreconcile.Request {
		items, err := identityBackendsOf(ctx, r, obj.GetNamespace(), obj.GetName())
		if err != nil {
			log.FromContext(ctx).Error(err, "watch could not list the KeystoneIdentityBackends to map an event")
			return nil
		}
		out := make([]crreconcile.Request, 0, len(items))
		for _, b := range items {
			out = append(out, crreconcile.Request{NamespacedName: client.ObjectKeyFromObject(b)})
		}
		slices.SortFunc(out, func(a, b crreconcile.Request) int { return compareKeys(a.NamespacedName, b.NamespacedName) })
		return out
	}
}

// backendTargetCluster is the multicluster.TargetClusterFunc of a backend: the target
// cluster of the Keystone it names.
func backendTargetCluster(r client.Reader) multicluster.TargetClusterFunc {
	keystoneTarget := multicluster.TargetClusterOf(r, func() *v1alpha1.Keystone { return &v1alpha1.Keystone{} },
		func(k *v1alpha1.Keystone) *commonv1.TargetClusterRefSpec { return k.Spec.TargetClusterRef })
	return func(ctx context.Context, key client.ObjectKey) (string, bool) {
		var b v1alpha1.KeystoneIdentityBackend
		if err := r.Get(ctx, key, &b); err != nil {
			return "", false
		}
		return keystoneTarget(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.KeystoneRef.Name})
	}
}

// compareKeys orders object keys by namespace, then name.
func compareKeys(a, b client.ObjectKey) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}
