package keystone

import (
	"context"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mchandler "sigs.k8s.io/multicluster-runtime/pkg/handler"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
)

// owned are the kinds a Keystone writes and whose changes bring it back; its Secrets
// come through the Secret watch of SetupWithManager instead.
func owned() []client.Object {
	return []client.Object{
		&appsv1.Deployment{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{}, &corev1.ConfigMap{},
		&esov1.ExternalSecret{}, &gatewayv1.HTTPRoute{}, &autoscalingv2.HorizontalPodAutoscaler{},
		&certmanagerv1.Certificate{}, &mariadbv1alpha1.Database{}, &mariadbv1alpha1.User{}, &mariadbv1alpha1.Grant{},
		&batchv1.Job{}, &batchv1.CronJob{}, &corev1.Secret{}, &esov1alpha1.PushSecret{},
		&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{},
	}
}

// Children are the kinds a Keystone writes, as empty lists: the kinds the
// target-cluster sweep deletes (kinds a cluster does not serve are skipped).
func Children() []client.ObjectList {
	return []client.ObjectList{
		&appsv1.DeploymentList{}, &corev1.ServiceList{}, &policyv1.PodDisruptionBudgetList{},
		&corev1.ConfigMapList{}, &corev1.SecretList{}, &esov1.ExternalSecretList{}, &gatewayv1.HTTPRouteList{},
		&autoscalingv2.HorizontalPodAutoscalerList{}, &certmanagerv1.CertificateList{},
		&mariadbv1alpha1.DatabaseList{}, &mariadbv1alpha1.UserList{}, &mariadbv1alpha1.GrantList{},
		&batchv1.JobList{}, &batchv1.CronJobList{}, &esov1alpha1.PushSecretList{},
		&corev1.ServiceAccountList{}, &rbacv1.RoleList{}, &rbacv1.RoleBindingList{},
	}
}

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
//     the management cluster (Deployments, Services, PDBs, ConfigMaps, ExternalSecrets,
//     Certificates, the mariadb-operator Databases, Users and Grants, Jobs, CronJobs,
//     HorizontalPodAutoscalers, HTTPRoutes, and the rotation pods' ServiceAccount,
//     Role and RoleBinding); a kind the management cluster does not
//     serve is skipped and logged (a Keystone that asks for a route on a cluster without
//     the Gateway API gets GatewayAPINotInstalled);
//   - the admin password, database password and connection Secrets, through the
//     secrets.SecretRefIndex field index, on the management cluster and on the target
//     clusters, so a password that ESO syncs anew re-runs the bootstrap without waiting
//     for a requeue;
//   - SecretStores and, unless Options.NamespaceScoped, ClusterSecretStores, each
//     enqueueing only the Keystones whose effective spec.secretStoreRef selects the
//     store that changed (secrets.AddStoreWatches);
//   - the children a Keystone claims on target clusters (multicluster.AddChildWatches).
//
// The policy override ConfigMap is the user's and carries no label of the operator, so
// the label-filtered cache (apply.CacheOptions) does not hold it and no watch sees it:
// a change of the overrides is picked up by the next pass, at an edit of the Keystone,
// a change of one of its children or the manager's periodic resync; a missing one is
// polled (PolicyNotFound requeues).
//
// The controller reconciles with Options.Wrap(r) when Wrap is set.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr mcmanager.Manager) error {
	local := mgr.GetLocalManager()
	scheme := local.GetScheme()
	b := mcbuilder.ControllerManagedBy(mgr).Named("keystone").WithOptions(multicluster.ControllerOptions(mgr)).
		For(&v1alpha1.Keystone{}, mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false),
			mcbuilder.WithPredicates(reconcile.IgnoreStatusWrites()))
	b, notServed, err := multicluster.AddOwnedWatches(b, scheme, local.GetRESTMapper(), owned()...)
	if err != nil {
		return err
	}
	for _, gvk := range notServed {
		log.FromContext(ctx).Info("kind not served by the management cluster: not watched", "kind", gvk)
	}
	targets := multicluster.TargetClusterOf(local.GetClient(), func() *v1alpha1.Keystone { return &v1alpha1.Keystone{} },
		func(k *v1alpha1.Keystone) *commonv1.TargetClusterRefSpec { return k.Spec.TargetClusterRef })
	if err := secrets.IndexSecretRefs(ctx, local.GetFieldIndexer(), &v1alpha1.Keystone{}, secretRefs); err != nil {
		return err
	}
	newList := func() client.ObjectList { return &v1alpha1.KeystoneList{} }
	if b, err = secrets.AddSecretWatches(b, scheme, targets, secrets.SecretRefFanOut(local.GetClient(), newList)); err != nil {
		return err
	}
	fanOut := secrets.StoreRefFanOut(newList,
		func(k *v1alpha1.Keystone) *commonv1.SecretStoreRefSpec { return k.Spec.SecretStoreRef })
	if b, err = secrets.AddStoreWatches(b, scheme, targets, r.opts.NamespaceScoped, local.GetClient(), fanOut); err != nil {
		return err
	}
	if b, err = multicluster.AddChildWatches(b, scheme, &v1alpha1.Keystone{}, r.resolver.Remote(), owned()...); err != nil {
		return err
	}
	// A KeystoneIdentityBackend whose DomainReady gate changes (status) brings its
	// Keystone, whose IdentityBackends row reads that gate: no status predicate here.
	b = b.Watches(&v1alpha1.KeystoneIdentityBackend{}, mchandler.EnqueueRequestsFromMapFunc(identitybackend.MapToKeystone),
		mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false))
	var rec crreconcile.Reconciler = r
	if r.opts.Wrap != nil {
		rec = r.opts.Wrap(r)
	}
	return b.Complete(multicluster.LocalReconciler(rec))
}
