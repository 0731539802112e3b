package controller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// owned are the kinds a Horizon writes.
func owned() []client.Object {
	return []client.Object{
		&appsv1.Deployment{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{}, &corev1.ConfigMap{},
		&esov1.ExternalSecret{}, &gatewayv1.HTTPRoute{}, &autoscalingv2.HorizontalPodAutoscaler{},
		&vpav1.VerticalPodAutoscaler{}, &networkingv1.NetworkPolicy{},
	}
}

// Children are the kinds a Horizon writes, as empty lists: the kinds the target-cluster
// sweep deletes (kinds a cluster does not serve are skipped).
func Children() []client.ObjectList {
	return []client.ObjectList{
		&appsv1.DeploymentList{}, &corev1.ServiceList{}, &policyv1.PodDisruptionBudgetList{},
		&corev1.ConfigMapList{}, &esov1.ExternalSecretList{}, &gatewayv1.HTTPRouteList{},
		&autoscalingv2.HorizontalPodAutoscalerList{}, &vpav1.VerticalPodAutoscalerList{},
		&networkingv1.NetworkPolicyList{},
	}
}

// SetupWithManager registers the Horizon controller on mgr (built with
// multicluster.NewManager; the resolver of NewReconciler must come from the same
// manager). It watches:
//
//   - Horizons (not the operator's own status writes) and the children they control on
//     the management cluster; HTTPRoutes only when the management cluster serves the
//     kind (a Horizon that asks for a route on a cluster without the Gateway API gets
//     GatewayAPINotInstalled), VerticalPodAutoscalers likewise;
//   - the SECRET_KEY Secrets, through the secrets.SecretRefIndex field index, on the management
//     cluster and on the target clusters (multicluster.AddInputWatch), so a key that ESO
//     rotates rolls the pods without waiting for a requeue;
//   - SecretStores and, unless Options.NamespaceScoped, ClusterSecretStores, each
//     enqueueing only the Horizons whose effective spec.secretStoreRef selects the store
//     that changed (secrets.AddStoreWatches);
//   - the children a Horizon claims on target clusters (multicluster.AddChildWatches).
//
// The controller reconciles with Options.Wrap(r) when Wrap is set.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr mcmanager.Manager) error {
	local := mgr.GetLocalManager()
	scheme := local.GetScheme()
	b := mcbuilder.ControllerManagedBy(mgr).Named("horizon").WithOptions(multicluster.ControllerOptions(mgr)).
		For(&v1alpha1.Horizon{}, mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false),
			mcbuilder.WithPredicates(reconcile.IgnoreStatusWrites()))
	b, notServed, err := multicluster.AddOwnedWatches(b, scheme, local.GetRESTMapper(), owned()...)
	if err != nil {
		return err
	}
	for _, gvk := range notServed {
		log.FromContext(ctx).Info("kind not served by the management cluster: not watched", "kind", gvk)
	}
	targets := multicluster.TargetClusterOf(local.GetClient(), func() *v1alpha1.Horizon { return &v1alpha1.Horizon{} },
		func(h *v1alpha1.Horizon) *commonv1.TargetClusterRefSpec { return h.Spec.TargetClusterRef })
	if err := secrets.IndexSecretRefs(ctx, local.GetFieldIndexer(), &v1alpha1.Horizon{},
		func(h *v1alpha1.Horizon) []string { return []string{SecretKeyName(h)} }); err != nil {
		return err
	}
	newList := func() client.ObjectList { return &v1alpha1.HorizonList{} }
	if b, err = secrets.AddSecretWatches(b, scheme, targets, secrets.SecretRefFanOut(local.GetClient(), newList)); err != nil {
		return err
	}
	fanOut := secrets.StoreRefFanOut(newList,
		func(h *v1alpha1.Horizon) *commonv1.SecretStoreRefSpec { return h.Spec.SecretStoreRef })
	if b, err = secrets.AddStoreWatches(b, scheme, targets, r.opts.NamespaceScoped, local.GetClient(), fanOut); err != nil {
		return err
	}
	if b, err = multicluster.AddChildWatches(b, scheme, &v1alpha1.Horizon{}, r.resolver.Remote(), owned()...); err != nil {
		return err
	}
	var rec crreconcile.Reconciler = r
	if r.opts.Wrap != nil {
		rec = r.opts.Wrap(r)
	}
	return b.Complete(multicluster.LocalReconciler(rec))
}
