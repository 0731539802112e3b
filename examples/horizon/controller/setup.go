package controller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
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
//   - the children a Horizon claims on target clusters (multicluster.AddChildWatches).
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
	return r.Complete(b)
}
