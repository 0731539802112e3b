package simulate_test

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

func TestMarkDeploymentAvailable(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	labels := map[string]string{"app": "x"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(3)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}},
			},
		},
	}
	if err := env.Client.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	got, err := simulate.MarkDeploymentAvailable(ctx, env.Client, client.ObjectKeyFromObject(d))
	if err != nil {
		t.Fatal(err)
	}
	stored := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), stored); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []*appsv1.Deployment{got, stored} {
		s := obj.Status
		if s.ObservedGeneration != obj.Generation || s.AvailableReplicas != 3 || s.ReadyReplicas != 3 || s.UpdatedReplicas != 3 {
			t.Errorf("status = %+v, want a rolled-out Deployment with 3 replicas", s)
		}
		available := false
		for _, c := range s.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
				available = true
			}
		}
		if !available {
			t.Errorf("Available condition not True: %+v", s.Conditions)
		}
	}
}

func TestMarkDeploymentAvailableMissing(t *testing.T) {
	ns := env.Namespace(t)
	_, err := simulate.MarkDeploymentAvailable(context.Background(), env.Client, client.ObjectKey{Namespace: ns, Name: "absent"})
	if err == nil || !strings.Contains(err.Error(), ns+"/absent") {
		t.Fatalf("error = %v, want one naming %s/absent", err, ns)
	}
}
