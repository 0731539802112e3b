package deployment_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// operatorName is the field manager the Applier tests name the operator with.
const operatorName = "my-operator"

// workloadPass is a reconciler's workload step: the Deployment, its Service and
// PodDisruptionBudget, no HorizontalPodAutoscaler and one VerticalPodAutoscaler.
func workloadPass(c client.Client, owner client.Object, ready *bool) func(context.Context) error {
	ns := owner.GetNamespace()
	return func(ctx context.Context) error {
		var err error
		if *ready, err = deployment.EnsureDeployment(ctx, c, env.Scheme, owner, desiredDeployment(ns, "web", nil)); err != nil {
			return err
		}
		if err := deployment.EnsureService(ctx, c, env.Scheme, owner, desiredService(ns, corev1.ServiceTypeClusterIP)); err != nil {
			return err
		}
		if err := deployment.EnsurePodDisruptionBudget(ctx, c, env.Scheme, owner, desiredPDB(ns, 1)); err != nil {
			return err
		}
		if _, err := deployment.ReconcileHPA(ctx, c, env.Scheme, owner, client.ObjectKey{Namespace: ns, Name: "web"}, nil); err != nil {
			return err
		}
		_, err = vpaFlow(ctx, c, env.Scheme, owner, []*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "web")})
		return err
	}
}

// TestConvergedPassThroughApplierSendsNothing: the workload step through an Applier
// over a manager's cache creates each child once; once the Deployment is ready and the
// informers have caught up, a pass sends no request at all — EnsureDeployment's own
// read included.
func TestConvergedPassThroughApplierSendsNothing(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	a, counter := env.StartApplier(t, ns, operatorName)
	var ready bool
	pass := workloadPass(a, owner, &ready)

	ctx, writes := apply.WithWrites(context.Background())
	if err := pass(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Deployment " + ns + "/web created",
		"Service " + ns + "/web created",
		"PodDisruptionBudget " + ns + "/web created",
		"VerticalPodAutoscaler " + ns + "/web created",
	}
	if diff := cmp.Diff(want, testenv.WriteStrings(writes.All())); diff != "" {
		t.Errorf("first pass writes (-want +got):\n%s", diff)
	}
	eventually(t, "the Deployment to be ready, seen through the cache", func(ctx context.Context) (bool, string, error) {
		err := pass(ctx)
		return ready, fmt.Sprintf("ready=%v", ready), err
	})
	testenv.ExpectQuiet(t, counter, 0, pass)
	if !ready {
		t.Error("a converged pass reported the Deployment not ready")
	}
}

// TestEnsureDeploymentRecordsWrites: the create, a converged call and the delete and
// re-create of a selector change are reported through apply.Record. (Through an
// Applier, so that the converged call is reported as skipped whatever the Deployment
// controller writes to the status meanwhile.)
func TestEnsureDeploymentRecordsWrites(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	a := apply.NewApplier(env.Client, apply.ApplierOptions{FieldManager: operatorName})
	ctx, writes := apply.WithWrites(context.Background())
	for _, app := range []string{"web", "web", "web-v2"} {
		if _, err := deployment.EnsureDeployment(ctx, a, env.Scheme, owner, desiredDeployment(ns, app, nil)); err != nil {
			t.Fatal(err)
		}
	}
	key := "Deployment " + ns + "/web"
	want := []string{key + " created", key + " skipped", key + " deleted", key + " created"}
	if diff := cmp.Diff(want, testenv.WriteStrings(writes.All())); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
}

// TestWorkloadsThroughApplierWriteUnderTheOperatorsName: every child the package
// applies through an Applier carries the operator's field manager (the name of its create:
// apply.CreateFieldManager).
func TestWorkloadsThroughApplierWriteUnderTheOperatorsName(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	a := apply.NewApplier(env.Client, apply.ApplierOptions{FieldManager: operatorName})
	var ready bool
	if err := workloadPass(a, owner, &ready)(ctx); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}, desiredPDB(ns, 1), &vpav1.VerticalPodAutoscaler{}} {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, obj); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{apply.CreateFieldManager(operatorName) + "/Update"}, testenv.FieldManagers(obj)); diff != "" {
			t.Errorf("managers of %T (-want +got):\n%s", obj, diff)
		}
	}
}

// TestEnsureDeploymentThroughApplierKeepsOwnedReplicas: the replica hand-off to an
// autoscaler works under the operator's own field manager: a count the operator's
// manager owned is kept when the desired count becomes nil, until the autoscaler takes
// it over.
func TestEnsureDeploymentThroughApplierKeepsOwnedReplicas(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	a := apply.NewApplier(env.Client, apply.ApplierOptions{FieldManager: operatorName})
	if _, err := deployment.EnsureDeployment(ctx, a, env.Scheme, owner, desiredDeployment(ns, "web", new(int32(3)))); err != nil {
		t.Fatal(err)
	}
	d := desiredDeployment(ns, "web", nil)
	key := client.ObjectKeyFromObject(d)
	if _, err := deployment.EnsureDeployment(ctx, a, env.Scheme, owner, d); err != nil {
		t.Fatal(err)
	}
	if got, _ := storedReplicas(t, key); got != 3 {
		t.Fatalf("replicas = %d after the desired count became nil, want the owned 3 kept", got)
	}
	scaleAsHPA(t, key, 5)
	if _, err := deployment.EnsureDeployment(ctx, a, env.Scheme, owner, desiredDeployment(ns, "web", nil)); err != nil {
		t.Fatal(err)
	}
	if got, _ := storedReplicas(t, key); got != 5 {
		t.Errorf("replicas = %d after the autoscaler scaled, want 5", got)
	}
}

// TestEnsureDeploymentThroughApplierLeavesDefaultReplicas: a Deployment created without
// a count holds the API server's default in the entry of its create
// (apply.CreatedEntry); the first change does not take that default for a count the
// operator chose, so the field manager's Apply entry never claims spec.replicas.
func TestEnsureDeploymentThroughApplierLeavesDefaultReplicas(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	a := apply.NewApplier(env.Client, apply.ApplierOptions{FieldManager: operatorName})
	if _, err := deployment.EnsureDeployment(ctx, a, env.Scheme, owner, desiredDeployment(ns, "web", nil)); err != nil {
		t.Fatal(err)
	}
	changed := desiredDeployment(ns, "web", nil)
	changed.Spec.Template.Spec.Containers[0].Image = "registry.example/web:2"
	if _, err := deployment.EnsureDeployment(ctx, a, env.Scheme, owner, changed); err != nil {
		t.Fatal(err)
	}
	stored := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(changed), stored); err != nil {
		t.Fatal(err)
	}
	for _, mf := range stored.ManagedFields {
		if mf.Manager == operatorName && mf.Operation == metav1.ManagedFieldsOperationApply &&
			strings.Contains(mf.FieldsV1.String(), `"f:replicas"`) {
			t.Errorf("the field manager claims the default spec.replicas: %s", mf.FieldsV1.String())
		}
	}
	if stored.Spec.Replicas == nil || *stored.Spec.Replicas != 1 {
		t.Errorf("spec.replicas = %v, want the default 1", stored.Spec.Replicas)
	}
}
