package controller

import (
	"context"
	"fmt"

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
	"github.com/c5c3/reconciler-sdk/capability"
	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/httproute"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// SecretKeyIndex is the field index of Horizons by the name of their SECRET_KEY Secret
// (SecretKeyName): a Secret event finds the Horizons that read it without a List of
// every Horizon.
const SecretKeyIndex = "horizon.secretKeySecretName"

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
//   - the SECRET_KEY Secrets, through the SecretKeyIndex field index, on the management
//     cluster and on the target clusters (multicluster.AddInputWatch), so a key that ESO
//     rotates rolls the pods without waiting for a requeue;
//   - SecretStores and, unless Options.NamespaceScoped, ClusterSecretStores, each
//     enqueueing only the Horizons whose effective spec.secretStoreRef selects the store
//     that changed (secrets.AddStoreWatches);
//   - the children a Horizon claims on target clusters (multicluster.AddChildWatches).
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr mcmanager.Manager) error {
	local := mgr.GetLocalManager()
	scheme := local.GetScheme()
	err := local.GetFieldIndexer().IndexField(ctx, &v1alpha1.Horizon{}, SecretKeyIndex, func(o client.Object) []string {
		return []string{SecretKeyName(o.(*v1alpha1.Horizon))}
	})
	if err != nil {
		return fmt.Errorf("indexing Horizons by %s: %w", SecretKeyIndex, err)
	}
	localOnly := []mcbuilder.EngageOptions{
		mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false),
	}
	b := mcbuilder.ControllerManagedBy(mgr).Named("horizon").
		For(&v1alpha1.Horizon{}, localOnly[0], localOnly[1], mcbuilder.WithPredicates(reconcile.IgnoreStatusWrites()))
	owned := []client.Object{
		&appsv1.Deployment{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{}, &corev1.ConfigMap{},
		&esov1.ExternalSecret{}, &autoscalingv2.HorizontalPodAutoscaler{}, &networkingv1.NetworkPolicy{},
	}
	served, err := capability.IsKindServed(local.GetRESTMapper(), httproute.GVK)
	if err != nil {
		return fmt.Errorf("probing the management cluster for %s: %w", httproute.GVK.Kind, err)
	}
	if served {
		owned = append(owned, &gatewayv1.HTTPRoute{})
	} else {
		log.FromContext(ctx).Info("the Gateway API is not installed: HTTPRoutes are not watched", "kind", httproute.GVK)
	}
	if served, err = capability.IsKindServed(local.GetRESTMapper(), deployment.VPAGroupVersionKind); err != nil {
		return fmt.Errorf("probing the management cluster for %s: %w", deployment.VPAGroupVersionKind.Kind, err)
	}
	if served {
		owned = append(owned, &vpav1.VerticalPodAutoscaler{})
	}
	for _, o := range owned {
		b = b.Owns(o, localOnly[0], localOnly[1])
	}
	targets := multicluster.TargetClusterOf(local.GetClient(), func() *v1alpha1.Horizon { return &v1alpha1.Horizon{} },
		func(h *v1alpha1.Horizon) *commonv1.TargetClusterRefSpec { return h.Spec.TargetClusterRef })
	if b, err = multicluster.AddInputWatch(b, scheme, targets, &corev1.Secret{}, secretToHorizons(local.GetClient())); err != nil {
		return err
	}
	fanOut := secrets.StoreRefFanOut(func() client.ObjectList { return &v1alpha1.HorizonList{} },
		func(h *v1alpha1.Horizon) *commonv1.SecretStoreRefSpec { return h.Spec.SecretStoreRef })
	if b, err = secrets.AddStoreWatches(b, scheme, targets, r.opts.NamespaceScoped, local.GetClient(), fanOut); err != nil {
		return err
	}
	remoteKinds := append(owned[:len(owned):len(owned)], &gatewayv1.HTTPRoute{}, &vpav1.VerticalPodAutoscaler{})
	if b, err = multicluster.AddChildWatches(b, scheme, &v1alpha1.Horizon{}, r.resolver.Remote(), remoteKinds...); err != nil {
		return err
	}
	return b.Complete(multicluster.LocalReconciler(r))
}

// secretToHorizons maps a Secret event to the Horizons of its namespace that read it as
// their SECRET_KEY Secret, through the SecretKeyIndex field index of the cache behind c.
func secretToHorizons(c client.Reader) func(context.Context, client.Object) []crreconcile.Request {
	return func(ctx context.Context, obj client.Object) []crreconcile.Request {
		var list v1alpha1.HorizonList
		if err := c.List(ctx, &list, client.InNamespace(obj.GetNamespace()),
			client.MatchingFields{SecretKeyIndex: obj.GetName()}); err != nil {
			log.FromContext(ctx).Error(err, "listing the Horizons of a Secret", "secret", client.ObjectKeyFromObject(obj))
			return nil
		}
		reqs := make([]crreconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			reqs = append(reqs, crreconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return reqs
	}
}
