package bench_test

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/apply"
)

// fieldManager is the benchmark operator's own field-manager name.
const fieldManager = "bench-operator"

// childrenPerOwner is how many children every owner has (desiredChildren).
const childrenPerOwner = 8

// childObjects returns an empty object of every child kind, for informers and Lists.
func childObjects() []client.Object {
	return []client.Object{&corev1.ServiceAccount{}, &corev1.ConfigMap{}, &corev1.Secret{},
		&appsv1.Deployment{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{},
		&autoscalingv2.HorizontalPodAutoscaler{}, &networkingv1.NetworkPolicy{}}
}

// childLabels are the labels of every child of owner. They carry apply.ManagedByLabel
// (which the Applier would stamp anyway) in every way, so that the three ways write the
// same objects.
func childLabels(owner *BenchApp) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":     "benchapp",
		"app.kubernetes.io/instance": owner.Name,
		apply.ManagedByLabel:         fieldManager,
	}
}

func selectorLabels(owner *BenchApp) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "benchapp", "app.kubernetes.io/instance": owner.Name}
}

func childMeta(owner *BenchApp) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: owner.Name, Namespace: owner.Namespace, Labels: childLabels(owner)}
}

// desiredChildren builds owner's eight children afresh, in the order a pass ensures
// them (a ServiceAccount, a ConfigMap, a Secret, a Deployment, a Service, a
// PodDisruptionBudget, a HorizontalPodAutoscaler and a NetworkPolicy): what the
// Server-Side Apply ways apply on every pass, and what CreateOrUpdate copies from.
func desiredChildren(owner *BenchApp) []client.Object {
	sel := selectorLabels(owner)
	replicas := owner.Spec.Replicas
	minReplicas, utilization := int32(1), int32(80)
	minAvailable := intstr.FromInt32(1)
	tcp := corev1.ProtocolTCP
	port := intstr.FromInt32(8080)
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: childMeta(owner), AutomountServiceAccountToken: new(false)},
		&corev1.ConfigMap{ObjectMeta: childMeta(owner), Data: map[string]string{
			"app.conf": "[DEFAULT]\nname = " + owner.Name + "\nworkers = 4\n" + strings.Repeat("# padding\n", 20)}},
		&corev1.Secret{ObjectMeta: childMeta(owner), Data: map[string][]byte{
			"password": []byte("secret-of-" + owner.Name)}},
		&appsv1.Deployment{ObjectMeta: childMeta(owner), Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec: corev1.PodSpec{
					ServiceAccountName: owner.Name,
					Containers: []corev1.Container{{
						Name:  "app",
						Image: owner.Spec.Image,
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
						Env:   []corev1.EnvVar{{Name: "APP_CONFIG", Value: "/etc/app/app.conf"}},
					}},
				},
			},
		}},
		// Headless: envtest's Service IP range holds 256 addresses, fewer than the
		// benchmark's Services.
		&corev1.Service{ObjectMeta: childMeta(owner), Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  sel,
			Ports:     []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: port, Protocol: corev1.ProtocolTCP}},
		}},
		&policyv1.PodDisruptionBudget{ObjectMeta: childMeta(owner), Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: &minAvailable,
			Selector:     &metav1.LabelSelector{MatchLabels: sel},
		}},
		&autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: childMeta(owner), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: owner.Name},
			MinReplicas:    &minReplicas,
			MaxReplicas:    3,
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{
					Name:   corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &utilization},
				},
			}},
		}},
		&networkingv1.NetworkPolicy{ObjectMeta: childMeta(owner), Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: sel},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "frontend"}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}},
			}},
		}},
	}
}

// createOrUpdateChild is the CreateOrUpdate baseline for one child: it reads the
// existing object through c, copies the desired fields onto it (leaving the server's
// defaults alone, so that a converged object compares equal and is not written) and
// creates or updates it. It is written the way a careful hand-written controller would
// be: a mutate function that replaced whole structs would update on every pass.
func createOrUpdateChild(ctx context.Context, c client.Client, owner *BenchApp, desired client.Object) (controllerutil.OperationResult, error) {
	existing := desired.DeepCopyObject().(client.Object)
	stripToKey(existing)
	return controllerutil.CreateOrUpdate(ctx, c, existing, func() error {
		labels := existing.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		for k, v := range desired.GetLabels() {
			labels[k] = v
		}
		existing.SetLabels(labels)
		mutate(existing, desired)
		return controllerutil.SetControllerReference(owner, existing, env.Scheme)
	})
}

// stripToKey empties obj but for its name and namespace, as an object to read into.
func stripToKey(obj client.Object) {
	key := client.ObjectKeyFromObject(obj)
	switch o := obj.(type) {
	case *corev1.ServiceAccount:
		*o = corev1.ServiceAccount{}
	case *corev1.ConfigMap:
		*o = corev1.ConfigMap{}
	case *corev1.Secret:
		*o = corev1.Secret{}
	case *appsv1.Deployment:
		*o = appsv1.Deployment{}
	case *corev1.Service:
		*o = corev1.Service{}
	case *policyv1.PodDisruptionBudget:
		*o = policyv1.PodDisruptionBudget{}
	case *autoscalingv2.HorizontalPodAutoscaler:
		*o = autoscalingv2.HorizontalPodAutoscaler{}
	case *networkingv1.NetworkPolicy:
		*o = networkingv1.NetworkPolicy{}
	default:
		panic(fmt.Sprintf("stripToKey: unexpected %T", obj))
	}
	obj.SetName(key.Name)
	obj.SetNamespace(key.Namespace)
}

// mutate copies the fields the workload sets from desired onto existing.
func mutate(existing, desired client.Object) {
	switch e := existing.(type) {
	case *corev1.ServiceAccount:
		e.AutomountServiceAccountToken = desired.(*corev1.ServiceAccount).AutomountServiceAccountToken
	case *corev1.ConfigMap:
		e.Data = desired.(*corev1.ConfigMap).Data
	case *corev1.Secret:
		e.Data = desired.(*corev1.Secret).Data
	case *appsv1.Deployment:
		d := desired.(*appsv1.Deployment)
		e.Spec.Replicas = d.Spec.Replicas
		if e.CreationTimestamp.IsZero() {
			e.Spec.Selector = d.Spec.Selector // immutable once created
		}
		e.Spec.Template.Labels = d.Spec.Template.Labels
		e.Spec.Template.Spec.ServiceAccountName = d.Spec.Template.Spec.ServiceAccountName
		want := d.Spec.Template.Spec.Containers[0]
		if cs := e.Spec.Template.Spec.Containers; len(cs) == 1 && cs[0].Name == want.Name {
			cs[0].Image, cs[0].Ports, cs[0].Env = want.Image, want.Ports, want.Env
		} else {
			e.Spec.Template.Spec.Containers = []corev1.Container{want}
		}
	case *corev1.Service:
		d := desired.(*corev1.Service)
		if e.CreationTimestamp.IsZero() {
			e.Spec.ClusterIP = d.Spec.ClusterIP // immutable once created
		}
		e.Spec.Selector, e.Spec.Ports = d.Spec.Selector, d.Spec.Ports
	case *policyv1.PodDisruptionBudget:
		d := desired.(*policyv1.PodDisruptionBudget)
		e.Spec.MinAvailable, e.Spec.Selector = d.Spec.MinAvailable, d.Spec.Selector
	case *autoscalingv2.HorizontalPodAutoscaler:
		e.Spec = desired.(*autoscalingv2.HorizontalPodAutoscaler).Spec
	case *networkingv1.NetworkPolicy:
		e.Spec = desired.(*networkingv1.NetworkPolicy).Spec
	}
}
