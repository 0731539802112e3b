package simulate_test

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

func newJob(t *testing.T, ns, name string) client.ObjectKey {
	t.Helper()
	j := simulate.SimulatedJob(&batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: batchv1.JobSpec{
			BackoffLimit: new(int32(2)),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "run", Image: "registry.example/run:1"}},
			}},
		},
	})
	if err := env.Client.Create(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if j.Spec.ManagedBy == nil || *j.Spec.ManagedBy != simulate.SimulatedJobManager {
		t.Fatalf("spec.managedBy = %v, want %q", j.Spec.ManagedBy, simulate.SimulatedJobManager)
	}
	return client.ObjectKeyFromObject(j)
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func TestMarkJobCompleteAndFailed(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)

	done := newJob(t, ns, "done")
	if _, err := simulate.MarkJobComplete(ctx, env.Client, done); err != nil {
		t.Fatal(err)
	}
	stored := &batchv1.Job{}
	if err := env.Client.Get(ctx, done, stored); err != nil {
		t.Fatal(err)
	}
	if !jobCondition(stored, batchv1.JobComplete) || stored.Status.Succeeded != 1 || stored.Status.CompletionTime == nil {
		t.Errorf("completed Job status = %+v", stored.Status)
	}

	failed := newJob(t, ns, "failed")
	if _, err := simulate.MarkJobFailed(ctx, env.Client, failed); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, failed, stored); err != nil {
		t.Fatal(err)
	}
	if !jobCondition(stored, batchv1.JobFailed) || stored.Status.Failed != 3 || jobCondition(stored, batchv1.JobComplete) {
		t.Errorf("failed Job status = %+v", stored.Status)
	}

	if _, err := simulate.MarkJobComplete(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: "absent"}); err == nil {
		t.Error("MarkJobComplete of a missing Job succeeded")
	}
}

func TestSetHTTPRouteAccepted(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	route := &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{
			ParentRefs: []gatewayv1.ParentReference{{Name: "gw-a"}, {Name: "gw-b"}},
		}},
	}
	if err := env.Client.Create(ctx, route); err != nil {
		t.Fatal(err)
	}
	got, err := simulate.SetHTTPRouteAccepted(ctx, env.Client, client.ObjectKeyFromObject(route), metav1.ConditionFalse, "NotAllowedByListeners", "no listener", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Parents) != 2 {
		t.Fatalf("status.parents = %+v, want one per parentRef", got.Status.Parents)
	}
	for _, p := range got.Status.Parents {
		c := p.Conditions[0]
		if p.ControllerName != simulate.SimulatedGatewayController || c.Type != "Accepted" ||
			c.Status != metav1.ConditionFalse || c.Reason != "NotAllowedByListeners" || c.ObservedGeneration != route.Generation {
			t.Errorf("parent status = %+v", p)
		}
	}
}
