package controller

import (
	"context"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/httproute"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// childKey is the key of the single child of each optional kind: the Keystone's own.
func childKey(k *v1alpha1.Keystone) client.ObjectKey {
	return client.ObjectKey{Namespace: k.Namespace, Name: k.Name}
}

// reconcileHTTPRoute is the HTTPRoute row: the route of spec.gateway (or none), with
// the Gateway's Accepted verdict as HTTPRouteReady. The kind is probed on the cluster
// the children land on, on every pass.
func (r *Reconciler) reconcileHTTPRoute(ctx context.Context, k *v1alpha1.Keystone) (ctrl.Result, error) {
	target := r.targetOf(ctx)
	var desired *gatewayv1.HTTPRoute
	if g := k.Spec.Gateway; g != nil {
		var err error
		desired, err = httproute.Build(childKey(k), *g, httproute.Backend{ServiceName: k.Name, Port: ServicePort})
		if err != nil {
			return ctrl.Result{}, err
		}
		desired.Labels = labels(k)
	}
	cond, res, err := httproute.Reconcile(ctx, target.Client, target.Client.Scheme(), k, childKey(k), desired)
	reconcile.ApplyCondition(k, cond)
	return res, err
}

// reconcileHealthCheck is the HealthCheck row: a GET of the version document through
// the TTL probe cache, as KeystoneAPIReady.
func (r *Reconciler) reconcileHealthCheck(ctx context.Context, k *v1alpha1.Keystone) (ctrl.Result, error) {
	cond, res, err := r.opts.Prober.Check(ctx, k.UID, r.opts.ProbeURL(k), ConditionKeystoneAPIReady)
	reconcile.ApplyCondition(k, cond)
	return res, err
}

// reconcileHPA is the HPA row: the HorizontalPodAutoscaler of spec.autoscaling, or none.
func (r *Reconciler) reconcileHPA(ctx context.Context, k *v1alpha1.Keystone) (ctrl.Result, error) {
	target := r.targetOf(ctx)
	cond, err := deployment.ReconcileHPA(ctx, target.Client, target.Client.Scheme(), k, childKey(k), desiredHPA(k))
	reconcile.ApplyCondition(k, cond)
	return ctrl.Result{}, err
}

// DefaultTargetCPUUtilization is the average CPU utilization, in percent of the
// request, the autoscaler aims at when spec.autoscaling.targetCPUUtilization is unset.
const DefaultTargetCPUUtilization = 80

// desiredHPA scales the Deployment on CPU between spec.autoscaling's bounds.
func desiredHPA(k *v1alpha1.Keystone) *autoscalingv2.HorizontalPodAutoscaler {
	a := k.Spec.Autoscaling
	if a == nil {
		return nil
	}
	target := a.TargetCPUUtilization
	if target == nil {
		target = ptr.To[int32](DefaultTargetCPUUtilization)
	}
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: k.Name, Namespace: k.Namespace, Labels: labels(k)},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: k.Name},
			MinReplicas:    a.MinReplicas,
			MaxReplicas:    a.MaxReplicas,
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{
					Name: corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{
						Type: autoscalingv2.UtilizationMetricType, AverageUtilization: target,
					},
				},
			}},
		},
	}
}
