package deployment_test

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"

	"github.com/c5c3/reconciler-sdk/deployment"
)

// ExampleEnsureDeployment shows the Deployment step of a reconciler: ensure the
// Deployment and its Service, and requeue until the Deployment is ready. Here the
// real Deployment controller rolls it out onto a kwok node.
func ExampleEnsureDeployment() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	// waitTimeout (90 s) is the bound on waits for a real controller, defined in main_test.go.
	ctx := context.Background()
	c, scheme := env.Client, env.Scheme
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := c.Create(ctx, ns); err != nil {
		panic(err)
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dashboard", Namespace: ns.Name}}
	if err := c.Create(ctx, owner); err != nil {
		panic(err)
	}
	labels := map[string]string{"app.kubernetes.io/name": "dashboard"}
	desired := func() *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "dashboard", Namespace: ns.Name},
			Spec: appsv1.DeploymentSpec{
				Replicas: new(int32(2)),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{
						Name: "dashboard", Image: "registry.example/dashboard:2025.1",
					}}},
				},
			},
		}
	}

	ready, err := deployment.EnsureDeployment(ctx, c, scheme, owner, desired())
	fmt.Println("first pass ready:", ready, err)

	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "dashboard", Namespace: ns.Name},
		Spec: corev1.ServiceSpec{
			Selector: labels,
			Ports:    []corev1.ServicePort{{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	err = deployment.EnsureService(ctx, c, scheme, owner, svc)
	fmt.Println("service:", err, "cluster IP assigned:", svc.Spec.ClusterIP != "")

	// A reconciler requeues after 10 s; here we poll.
	_ = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		ready, err = deployment.EnsureDeployment(ctx, c, scheme, owner, desired())
		return ready, err
	})
	fmt.Println("later pass ready:", ready, err)
	// Output:
	// first pass ready: false <nil>
	// service: <nil> cluster IP assigned: true
	// later pass ready: true <nil>
}

// ExampleVPAFlow shows the VPA flow: opt in, then opt out again.
func ExampleVPAFlow() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	ctx := context.Background()
	c, scheme := env.Client, env.Scheme
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := c.Create(ctx, ns); err != nil {
		panic(err)
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dashboard", Namespace: ns.Name}}
	if err := c.Create(ctx, owner); err != nil {
		panic(err)
	}
	vpa := &vpav1.VerticalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "dashboard", Namespace: ns.Name},
		Spec: vpav1.VerticalPodAutoscalerSpec{
			TargetRef:    &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "dashboard"},
			UpdatePolicy: &vpav1.PodUpdatePolicy{UpdateMode: new(vpav1.UpdateModeOff)},
		},
	}

	out, err := deployment.VPAFlow(ctx, c, scheme, owner, []*vpav1.VerticalPodAutoscaler{vpa})
	fmt.Println(out.Condition.Type, out.Condition.Status, out.Condition.Reason, err)

	out, err = deployment.VPAFlow(ctx, c, scheme, owner, nil)
	fmt.Println(out.Condition.Type, out.Condition.Status, out.Condition.Reason, err)
	// Output:
	// VPAReady True VPAReady <nil>
	// VPAReady True VPANotRequired <nil>
}
