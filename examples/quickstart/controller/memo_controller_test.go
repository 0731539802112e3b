package controller_test

import (
	"context"
	"os"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/reconciler-sdk/examples/quickstart/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/quickstart/controller"
	"github.com/c5c3/reconciler-sdk/operator"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// startOperator runs the operator as cmd/main.go does (operator.Run, its cache scoped
// to ns) until the test ends; the kit exposes its reconciler and counts its requests.
func startOperator(t *testing.T, ns string) *testenv.Operator {
	t.Helper()
	var opts testenv.OperatorOptions
	opts.FieldManager, opts.Namespace = controller.FieldManager, ns
	return env.StartSingleClusterOperator(t, opts, func(_ context.Context, op operator.Operator) error {
		r, err := controller.NewMemoReconciler(op.Applier, op.Scheme, op.APIReader, nil)
		if err != nil {
			return err
		}
		return r.SetupWithManager(op.Manager)
	})
}

// sampleMemo reads the sample Memo of config/samples into namespace ns.
func sampleMemo(t *testing.T, ns string) *v1alpha1.Memo {
	t.Helper()
	data, err := os.ReadFile("../config/samples/quickstart_v1alpha1_memo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := &v1alpha1.Memo{}
	if err := yaml.UnmarshalStrict(data, m); err != nil {
		t.Fatal(err)
	}
	m.Namespace = ns
	return m
}

// expectControlled fails the test unless obj exists in m's namespace with m as its
// controller.
func expectControlled(t *testing.T, m *v1alpha1.Memo, name string, obj client.Object) {
	t.Helper()
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: m.Namespace, Name: name}, obj); err != nil {
		t.Fatalf("%T %s: %v", obj, name, err)
	}
	if ref := metav1.GetControllerOf(obj); ref == nil || ref.UID != m.UID {
		t.Errorf("%T %s: controller %v, want the Memo %s", obj, name, ref, m.UID)
	}
}

// TestMemo runs the quick-start operator on the kit's real controllers: the sample Memo
// becomes Ready with its ConfigMap, Deployment and Service; a change of its settings
// rolls out a new ConfigMap and the prune keeps one older one; a converged pass sends no
// request.
func TestMemo(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	op := startOperator(t, ns)

	m := sampleMemo(t, ns)
	if err := env.Client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	testenv.ExpectCondition(t, env.Client, m, reconcile.ConditionReady, metav1.ConditionTrue)
	if m.Status.ObservedGeneration != m.Generation {
		t.Errorf("status.observedGeneration %d, want %d", m.Status.ObservedGeneration, m.Generation)
	}
	deploy := &appsv1.Deployment{}
	expectControlled(t, m, m.Name, deploy)
	expectControlled(t, m, m.Name, &corev1.Service{})
	expectControlled(t, m, m.Status.ConfigMap, &corev1.ConfigMap{})
	if got := deploy.Spec.Template.Spec.Volumes[0].ConfigMap.Name; got != m.Status.ConfigMap {
		t.Errorf("the Deployment mounts %s, want %s", got, m.Status.ConfigMap)
	}

	// Each change of the settings is a new ConfigMap and a rollout; once the Deployment
	// is ready again the prune keeps the current ConfigMap and one older one.
	history := []string{m.Status.ConfigMap}
	for _, msg := range []string{"second memo", "third memo"} {
		m.Spec.Message = msg
		if err := env.Client.Update(ctx, m); err != nil {
			t.Fatal(err)
		}
		testenv.ExpectCondition(t, env.Client, m, reconcile.ConditionReady, metav1.ConditionTrue)
		if m.Status.ConfigMap == history[len(history)-1] {
			t.Fatalf("message %q: the ConfigMap is still %s", msg, m.Status.ConfigMap)
		}
		history = append(history, m.Status.ConfigMap)
		expectControlled(t, m, m.Name, deploy)
		if got := deploy.Spec.Template.Spec.Volumes[0].ConfigMap.Name; got != m.Status.ConfigMap {
			t.Errorf("the Deployment mounts %s, want %s", got, m.Status.ConfigMap)
		}
	}
	expectControlled(t, m, history[1], &corev1.ConfigMap{}) // retained
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: history[0]}, &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Errorf("the oldest ConfigMap %s was not pruned: %v", history[0], err)
	}

	// A converged pass reads everything from the cache and writes nothing.
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(m)}
	testenv.ExpectQuiet(t, op.Counter, 0, func(ctx context.Context) error {
		_, err := op.Reconcilers[0].Reconcile(ctx, req)
		return err
	})
}
