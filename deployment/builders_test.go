package deployment_test

import (
	"context"
	"fmt"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/deployment"
)

// The built Service, PodDisruptionBudget and HorizontalPodAutoscaler are accepted by
// the API server through their flows and keep what the builders set; applied again,
// none is rewritten.
func TestBuildersOnTheAPIServer(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	ctx := context.Background()
	c := apply.NewApplier(env.Client, apply.ApplierOptions{})
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: map[string]string{"app.kubernetes.io/name": "web"}}
	}
	selector := map[string]string{"app.kubernetes.io/instance": "web"}

	svc := deployment.HTTPService(meta(), selector, 8080)
	pdb := deployment.OneUnavailablePDB(meta(), selector)
	hpa := deployment.CPUAutoscaler(meta(), "web", nil, 3, nil)
	ensure := func() {
		t.Helper()
		if err := deployment.EnsureService(ctx, c, env.Scheme, owner, deployment.HTTPService(meta(), selector, 8080)); err != nil {
			t.Fatal(err)
		}
		if err := deployment.EnsurePodDisruptionBudget(ctx, c, env.Scheme, owner, deployment.OneUnavailablePDB(meta(), selector)); err != nil {
			t.Fatal(err)
		}
		if _, err := deployment.ReconcileHPA(ctx, c, env.Scheme, owner, client.ObjectKey{Namespace: ns, Name: "web"},
			deployment.CPUAutoscaler(meta(), "web", nil, 3, nil)); err != nil {
			t.Fatal(err)
		}
	}
	ensure()
	for _, obj := range []client.Object{svc, pdb, hpa} {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
	}
	if p := svc.Spec.Ports; len(p) != 1 || p[0].Name != "http" || p[0].Port != 8080 || p[0].TargetPort != intstr.FromString("http") ||
		p[0].Protocol != corev1.ProtocolTCP || svc.Spec.Selector["app.kubernetes.io/instance"] != "web" || svc.Labels["app.kubernetes.io/name"] != "web" {
		t.Errorf("stored Service: ports %+v selector %v labels %v", p, svc.Spec.Selector, svc.Labels)
	}
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil ||
		pdb.Spec.Selector.MatchLabels["app.kubernetes.io/instance"] != "web" {
		t.Errorf("stored PodDisruptionBudget: %+v", pdb.Spec)
	}
	m := hpa.Spec.Metrics
	if hpa.Spec.ScaleTargetRef.Name != "web" || hpa.Spec.MaxReplicas != 3 || hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas != 1 ||
		len(m) != 1 || m[0].Resource.Name != corev1.ResourceCPU || *m[0].Resource.Target.AverageUtilization != deployment.DefaultTargetCPUUtilization {
		t.Errorf("stored HorizontalPodAutoscaler: %+v", hpa.Spec)
	}
	versions := []string{svc.ResourceVersion, pdb.ResourceVersion, hpa.ResourceVersion}
	ensure()
	for i, obj := range []client.Object{&corev1.Service{}, &policyv1.PodDisruptionBudget{}, &autoscalingv2.HorizontalPodAutoscaler{}} {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, obj); err != nil {
			t.Fatal(err)
		}
		if obj.GetResourceVersion() != versions[i] {
			t.Errorf("%T rewritten by a converged apply: resourceVersion %s -> %s", obj, versions[i], obj.GetResourceVersion())
		}
	}
}

// CPUAutoscaler aims for the given utilization and keeps the bounds as given.
func TestCPUAutoscaler(t *testing.T) {
	low, target := int32(2), int32(50)
	hpa := deployment.CPUAutoscaler(metav1.ObjectMeta{Name: "api"}, "api-deployment", &low, 5, &target)
	got := fmt.Sprint(hpa.Name, " ", hpa.Spec.ScaleTargetRef, " ", *hpa.Spec.MinReplicas, " ", hpa.Spec.MaxReplicas, " ",
		*hpa.Spec.Metrics[0].Resource.Target.AverageUtilization)
	if want := "api {Deployment api-deployment apps/v1} 2 5 50"; got != want {
		t.Fatalf("CPUAutoscaler = %q, want %q", got, want)
	}
}

// CPUAutoscalerFor takes a CR's spec.autoscaling bounds, defaults the target, and builds
// nothing without the block (the HPA flow then deletes the owner's autoscaler).
func TestCPUAutoscalerFor(t *testing.T) {
	if hpa := deployment.CPUAutoscalerFor(metav1.ObjectMeta{Name: "api"}, "api", nil); hpa != nil {
		t.Fatalf("CPUAutoscalerFor(nil) = %+v, want nil", hpa)
	}
	low := int32(2)
	hpa := deployment.CPUAutoscalerFor(metav1.ObjectMeta{Name: "api"}, "api-deployment",
		&commonv1.AutoscalingSpec{MinReplicas: &low, MaxReplicas: 5})
	got := fmt.Sprint(hpa.Name, " ", hpa.Spec.ScaleTargetRef, " ", *hpa.Spec.MinReplicas, " ", hpa.Spec.MaxReplicas, " ",
		*hpa.Spec.Metrics[0].Resource.Target.AverageUtilization)
	if want := "api {Deployment api-deployment apps/v1} 2 5 80"; got != want {
		t.Fatalf("CPUAutoscalerFor = %q, want %q", got, want)
	}
}

// The builders give what each flow applies: a Service with one named HTTP port, a
// PodDisruptionBudget that lets one pod go, an autoscaler on CPU.
func ExampleHTTPService() {
	meta := metav1.ObjectMeta{Name: "dashboard", Namespace: "openstack"}
	selector := map[string]string{"app.kubernetes.io/instance": "dashboard"}
	svc := deployment.HTTPService(meta, selector, 8080)
	fmt.Println(svc.Spec.Ports[0].Name, svc.Spec.Ports[0].Port, svc.Spec.Ports[0].TargetPort.String())
	pdb := deployment.OneUnavailablePDB(meta, selector)
	fmt.Println("maxUnavailable", pdb.Spec.MaxUnavailable.String())
	hpa := deployment.CPUAutoscaler(meta, "dashboard", nil, 4, nil)
	fmt.Println(hpa.Spec.ScaleTargetRef.Kind, hpa.Spec.ScaleTargetRef.Name, hpa.Spec.MaxReplicas,
		*hpa.Spec.Metrics[0].Resource.Target.AverageUtilization)
	// Output:
	// http 8080 http
	// maxUnavailable 1
	// Deployment dashboard 4 80
}
