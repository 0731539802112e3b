package keystone

import (
	"context"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/httproute"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// reconcileHealthCheck is the HealthCheck row: a GET of the version document through
// the TTL probe cache, as KeystoneAPIReady.
func (r *Reconciler) reconcileHealthCheck(ctx context.Context, k *v1alpha1.Keystone) (reconcile.Outcome, error) {
	return r.opts.Prober.Flow(ctx, k, ConditionKeystoneAPIReady, r.opts.ProbeURL(k))
}

// reconcileHTTPRoute is the HTTPRoute row: the route of spec.gateway (or none), with
// the Gateway's Accepted verdict as HTTPRouteReady. The kind is probed on the cluster
// the children land on, on every pass.
func (r *Reconciler) reconcileHTTPRoute(ctx context.Context, k *v1alpha1.Keystone) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	return httproute.SpecFlow(ctx, target.Client, target.Client.Scheme(), k, client.ObjectKeyFromObject(k), k.Spec.Gateway,
		httproute.Backend{ServiceName: k.Name, Port: names.ServicePort}, labels(k))
}

// reconcileHPA is the HPA row: the HorizontalPodAutoscaler of spec.autoscaling, or none.
func (r *Reconciler) reconcileHPA(ctx context.Context, k *v1alpha1.Keystone) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	return deployment.HPAFlow(ctx, target.Client, target.Client.Scheme(), k, client.ObjectKeyFromObject(k), desiredHPA(k))
}

// DefaultTargetCPUUtilization is the average CPU utilization, in percent of the
// request, the autoscaler aims at when spec.autoscaling.targetCPUUtilization is unset.
const DefaultTargetCPUUtilization = deployment.DefaultTargetCPUUtilization

// desiredHPA scales the Deployment on CPU between spec.autoscaling's bounds (none
// without it).
func desiredHPA(k *v1alpha1.Keystone) *autoscalingv2.HorizontalPodAutoscaler {
	return deployment.CPUAutoscalerFor(metav1.ObjectMeta{Name: k.Name, Namespace: k.Namespace, Labels: labels(k)}, k.Name, k.Spec.Autoscaling)
}
