package keystone

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mchandler "sigs.k8s.io/multicluster-runtime/pkg/handler"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/secrets"
)

// secretRefs are the Secrets a Keystone reads on every pass: the synced admin password,
// the generated database password and the connection Secret.
func secretRefs(k *v1alpha1.Keystone) []string {
	return []string{names.AdminPasswordSecretName(k), names.DatabasePasswordSecretName(k), names.ConnectionSecretName(k)}
}

// SetupWithManager registers the Keystone controller on mgr (built with
// multicluster.NewManager; the resolver of NewReconciler must come from the same
// manager). It watches:
//
//   - Keystones (not the operator's own status writes) and the children they control on
//     the management cluster: the kinds the steps declare they own (Step.Owns,
//     Pipeline.Owned); a kind the management cluster does not serve is skipped and logged (a Keystone that asks for a route on a cluster without
//     the Gateway API gets GatewayAPINotInstalled);
//   - the admin password, database password and connection Secrets, through the
//     secrets.SecretRefIndex field index, on the management cluster and on the target
//     clusters, so a password that ESO syncs anew re-runs the bootstrap without waiting
//     for a requeue;
//   - SecretStores and, unless Options.NamespaceScoped, ClusterSecretStores, each
//     enqueueing only the Keystones whose effective spec.secretStoreRef selects the
//     store that changed (secrets.AddStoreWatches);
//   - the children a Keystone claims on target clusters, the same kinds
//     (multicluster.AddChildWatches).
//
// The policy override ConfigMap is the user's and carries no label of the operator, so
// the label-filtered cache (apply.CacheOptions) does not hold it and no watch sees it:
// a change of the overrides is picked up by the next pass, at an edit of the Keystone,
// a change of one of its children or the manager's periodic resync; a missing one is
// polled (PolicyNotFound requeues).
//
// The controller reconciles with Options.Wrap(r) when Wrap is set.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr mcmanager.Manager) error {
	b, err := r.NewController(ctx, mgr)
	if err != nil {
		return err
	}
	inputs := secrets.CRInputs[*v1alpha1.Keystone]{SecretRefs: secretRefs, NamespaceScoped: r.opts.NamespaceScoped,
		NewList:  func() client.ObjectList { return &v1alpha1.KeystoneList{} },
		StoreRef: func(k *v1alpha1.Keystone) *commonv1.SecretStoreRefSpec { return k.Spec.SecretStoreRef }}
	if b, err = secrets.AddCRInputWatches(ctx, b, mgr, r.TargetClusters(mgr), &v1alpha1.Keystone{}, inputs); err != nil {
		return err
	}
	// A KeystoneIdentityBackend whose DomainReady gate changes (status) brings its
	// Keystone, whose IdentityBackends row reads that gate: no status predicate here.
	b = b.Watches(&v1alpha1.KeystoneIdentityBackend{}, mchandler.EnqueueRequestsFromMapFunc(identitybackend.MapToKeystone),
		mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false))
	return r.Complete(b)
}
