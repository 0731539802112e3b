package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mchandler "sigs.k8s.io/multicluster-runtime/pkg/handler"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/capability"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/operator"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// steps is the Horizon step table: a lane that ends the pass at the first requeue or
// error, then a group whose members all run. Each step declares the kinds it owns; the
// watches, the children list and the tests derive from them.
func (r *Reconciler) steps() []reconcile.Step[*v1alpha1.Horizon] {
	type step = reconcile.Step[*v1alpha1.Horizon]
	return []step{
		{Name: "Secrets", Condition: ConditionSecretsReady, Run: settle(r.reconcileSecrets),
			Owns: []client.Object{&esov1.ExternalSecret{}}},
		{Name: "WebSSO", Condition: ConditionWebSSOReady, Run: settle(r.reconcileWebSSO)},
		{Name: "Config", Condition: ConditionConfigReady, Run: settle(r.reconcileConfig),
			Owns: []client.Object{&corev1.ConfigMap{}}},
		{Name: "Deployment", Condition: ConditionDeploymentReady, Run: settle(r.reconcileDeployment),
			Owns: []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{}}},
		{Name: "Prune", Condition: ConditionConfigReady, Run: settle(r.prune)},
		reconcile.Sequential("Exposure",
			step{Name: "HTTPRoute", Condition: ConditionHTTPRouteReady, Run: settle(r.reconcileHTTPRoute),
				Owns: []client.Object{&gatewayv1.HTTPRoute{}}},
			step{Name: "HealthCheck", Condition: ConditionHorizonAPIReady, Run: settle(r.reconcileHealthCheck)},
			step{Name: "HPA", Condition: ConditionHPAReady, Run: settle(r.reconcileHPA),
				Owns: []client.Object{&autoscalingv2.HorizontalPodAutoscaler{}}},
			step{Name: "VPA", Condition: ConditionVPAReady, Run: settle(r.reconcileVPA),
				Owns: []client.Object{&vpav1.VerticalPodAutoscaler{}}},
			step{Name: "NetworkPolicy", Condition: ConditionNetworkPolicyReady, Run: settle(r.reconcileNetworkPolicy),
				Owns: []client.Object{&networkingv1.NetworkPolicy{}}},
		),
	}
}

// flow is a step in the Outcome shape: the condition to set and the requeue, or an error.
type flow func(ctx context.Context, h *v1alpha1.Horizon) (reconcile.Outcome, error)

// settle makes f a pipeline step that hands its outcome over with reconcile.Settle.
func settle(f flow) reconcile.StepFunc[*v1alpha1.Horizon] {
	return func(ctx context.Context, h *v1alpha1.Horizon) (ctrl.Result, error) {
		out, err := f(ctx, h)
		return reconcile.Settle(h, out, err)
	}
}

// Children are the kinds a Horizon writes, as empty lists, built from the step table
// with the SDK's scheme (operator.NewScheme); nil when that scheme cannot be built.
//
// Deprecated: use Reconciler.Children.
func Children() []client.ObjectList {
	scheme, err := operator.NewScheme()
	if err != nil {
		return nil
	}
	p, err := reconcile.NewPipeline(nil, (&Reconciler{}).steps()...)
	if err != nil {
		return nil
	}
	lists, _ := p.OwnedLists(scheme)
	return lists
}

// SetupWithManager registers the Horizon controller on mgr (built with
// multicluster.NewManager; the resolver of NewReconciler must come from the same
// manager). It watches:
//
//   - Horizons (not the operator's own status writes) and the kinds the step table
//     owns (reconcile.Pipeline.Owned) on the management cluster; HTTPRoutes only when
//     the management cluster serves the kind (a Horizon that asks for a route on a
//     cluster without the Gateway API gets GatewayAPINotInstalled), VPAs likewise;
//   - the SECRET_KEY Secrets, through the secrets.SecretRefIndex field index, on the management
//     cluster and on the target clusters (multicluster.AddInputWatch), so a key that ESO
//     rotates rolls the pods without waiting for a requeue;
//   - SecretStores and, unless Options.NamespaceScoped, ClusterSecretStores, each
//     enqueueing only the Horizons whose effective spec.secretStoreRef selects the store
//     that changed (secrets.AddStoreWatches);
//   - the children a Horizon claims on target clusters (multicluster.AddChildWatches);
//   - KeystoneIdentityBackends (unstructured, through the manager's cache, which the
//     WebSSO row then reads them from) on the management cluster, status included, each
//     enqueueing the Horizons of its namespace whose spec.websso.identityBackends names
//     it ([HorizonsNaming]), so a provider Keystone registers rolls the settings without
//     waiting for a requeue; only when the management cluster serves the kind when the
//     controller is set up (otherwise a Horizon that names a backend gets
//     IdentityBackendsNotInstalled).
//
// The controller reconciles with Options.Wrap(r) when Wrap is set.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr mcmanager.Manager) error {
	b, err := r.NewController(ctx, mgr)
	if err != nil {
		return err
	}
	b, err = secrets.AddCRInputWatches(ctx, b, mgr, r.TargetClusters(mgr), &v1alpha1.Horizon{}, secrets.CRInputs[*v1alpha1.Horizon]{
		NewList:    func() client.ObjectList { return &v1alpha1.HorizonList{} },
		StoreRef:   func(h *v1alpha1.Horizon) *commonv1.SecretStoreRefSpec { return h.Spec.SecretStoreRef },
		SecretRefs: func(h *v1alpha1.Horizon) []string { return []string{SecretKeyName(h)} }, NamespaceScoped: r.opts.NamespaceScoped})
	if err != nil {
		return err
	}
	local := mgr.GetLocalManager()
	gvk := identityBackendGVK
	served, err := capability.IsKindServed(local.GetRESTMapper(), gvk)
	if err != nil {
		return fmt.Errorf("asking the management cluster for %s: %w", gvk.Kind, err)
	}
	if !served {
		log.FromContext(ctx).Info("kind not served by the management cluster: not watched; spec.websso.identityBackends add no choice", "kind", gvk)
		return r.Complete(b)
	}
	// A backend's status (the registered providers) is what the WebSSO row reads: no
	// status predicate here. The watch's informer holds unstructured backends; the row
	// reads them from the same cache (the manager's client would read unstructured
	// objects past it).
	b = b.Watches(newIdentityBackend(), mchandler.EnqueueRequestsFromMapFunc(HorizonsNaming(local.GetClient())),
		mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false))
	r.management = local.GetCache()
	return r.Complete(b)
}

// HorizonsNaming returns the map function of the watch on KeystoneIdentityBackends: a
// backend enqueues the Horizons of its own namespace whose spec.websso.identityBackends
// names it, sorted by name. It lists through c (the manager's cached client); a list
// error is logged through the context's logger and enqueues nothing.
func HorizonsNaming(c client.Reader) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []crreconcile.Request {
		var list v1alpha1.HorizonList
		if err := c.List(ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
			log.FromContext(ctx).Error(err, "watch could not list the Horizons to map a KeystoneIdentityBackend event",
				"backend", client.ObjectKeyFromObject(obj))
			return nil
		}
		var out []crreconcile.Request
		for i := range list.Items {
			h := &list.Items[i]
			if h.Spec.WebSSO == nil {
				continue
			}
			if slices.ContainsFunc(h.Spec.WebSSO.IdentityBackends, func(ref v1alpha1.IdentityBackendRef) bool {
				return ref.Name == obj.GetName()
			}) {
				out = append(out, crreconcile.Request{NamespacedName: client.ObjectKeyFromObject(h)})
			}
		}
		slices.SortFunc(out, func(a, b crreconcile.Request) int { return strings.Compare(a.Name, b.Name) })
		return out
	}
}
