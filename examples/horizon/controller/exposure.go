package controller

import (
	"context"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/httproute"
	"github.com/c5c3/reconciler-sdk/netpol"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// reconcileHTTPRoute is the HTTPRoute row: the route of spec.gateway (or none), with
// the Gateway's Accepted verdict as HTTPRouteReady. The kind is probed on the cluster
// the children land on, on every pass.
func (r *Reconciler) reconcileHTTPRoute(ctx context.Context, h *v1alpha1.Horizon) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	var spec *httproute.Spec
	if g := h.Spec.Gateway; g != nil {
		spec = &httproute.Spec{
			ParentRef: httproute.ParentRef{Name: g.ParentRef.Name, Namespace: g.ParentRef.Namespace,
				SectionName: g.ParentRef.SectionName},
			Hostnames: []string{g.Hostname},
			Path:      g.Path,
		}
	}
	return httproute.SpecFlow(ctx, target.Client, target.Client.Scheme(), h, client.ObjectKeyFromObject(h), spec,
		httproute.Backend{ServiceName: h.Name, Port: ServicePort}, labels(h))
}

// reconcileHealthCheck is the HealthCheck row: a GET of the login page through the TTL
// probe cache, as HorizonAPIReady.
func (r *Reconciler) reconcileHealthCheck(ctx context.Context, h *v1alpha1.Horizon) (reconcile.Outcome, error) {
	return r.opts.Prober.Flow(ctx, h, ConditionHorizonAPIReady, r.opts.ProbeURL(h))
}

// reconcileHPA is the HPA row: the HorizontalPodAutoscaler of spec.autoscaling, or none.
func (r *Reconciler) reconcileHPA(ctx context.Context, h *v1alpha1.Horizon) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	return deployment.HPAFlow(ctx, target.Client, target.Client.Scheme(), h, client.ObjectKeyFromObject(h), desiredHPA(h))
}

// reconcileVPA is the VPA row: the VerticalPodAutoscaler of the dashboard Deployment
// when spec.vpa is enabled, or none; VPANotInstalled for an opt-in on a cluster without
// the VPA.
func (r *Reconciler) reconcileVPA(ctx context.Context, h *v1alpha1.Horizon) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	return deployment.VPAFlow(ctx, target.Client, target.Client.Scheme(), h, desiredVPAs(h))
}

// reconcileNetworkPolicy is the NetworkPolicy row: the policy of spec.networkPolicy, or
// none. An empty ingress list is refused (it would cut the dashboard off): the error
// propagates and the existing policy stays as it is.
func (r *Reconciler) reconcileNetworkPolicy(ctx context.Context, h *v1alpha1.Horizon) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	return netpol.Flow(ctx, target.Client, target.Client.Scheme(), h, client.ObjectKeyFromObject(h), desiredNetworkPolicy(h))
}

// desiredHPA scales the Deployment on CPU between spec.autoscaling's bounds (none
// without it).
func desiredHPA(h *v1alpha1.Horizon) *autoscalingv2.HorizontalPodAutoscaler {
	return deployment.CPUAutoscalerFor(metav1.ObjectMeta{Name: h.Name, Namespace: h.Namespace, Labels: labels(h)}, h.Name, h.Spec.Autoscaling)
}

// desiredVPAs is the VerticalPodAutoscaler of the Deployment when spec.vpa is enabled.
func desiredVPAs(h *v1alpha1.Horizon) []*vpav1.VerticalPodAutoscaler {
	v := h.Spec.VPA
	if v == nil || !v.Enabled {
		return nil
	}
	mode := vpav1.UpdateMode(v.UpdateMode)
	if mode == "" {
		mode = vpav1.UpdateModeOff
	}
	return []*vpav1.VerticalPodAutoscaler{{
		ObjectMeta: metav1.ObjectMeta{Name: h.Name, Namespace: h.Namespace, Labels: labels(h)},
		Spec: vpav1.VerticalPodAutoscalerSpec{
			TargetRef:    &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: h.Name},
			UpdatePolicy: &vpav1.PodUpdatePolicy{UpdateMode: ptr.To(mode)},
		},
	}}
}

// desiredNetworkPolicy admits spec.networkPolicy's ingress to the dashboard pods.
func desiredNetworkPolicy(h *v1alpha1.Horizon) *networkingv1.NetworkPolicy {
	n := h.Spec.NetworkPolicy
	if n == nil {
		return nil
	}
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: h.Name, Namespace: h.Namespace, Labels: labels(h)},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: selectorLabels(h)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     n.Ingress,
		},
	}
}
