package reconcile_test

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

// WidgetReconciler is a small operator built on the package: a three-row pipeline —
// Config, a Parallel group of two optional children, and an unnamed prune step —
// wrapped in RunPass so that the status is written on every exit.
type WidgetReconciler struct {
	Client   client.Client
	pipeline *reconcile.Pipeline[*Widget]
	opts     reconcile.PassOptions
}

// NewWidgetReconciler builds the step table once, at controller setup.
func NewWidgetReconciler(c client.Client, m *reconcile.Metrics) (*WidgetReconciler, error) {
	r := &WidgetReconciler{Client: c}
	p, err := reconcile.NewPipeline(m,
		reconcile.Step[*Widget]{Name: "Config", Condition: "ConfigReady", Run: r.reconcileConfig},
		reconcile.Parallel("Extras",
			reconcile.Step[*Widget]{Name: "HPA", Condition: "HPAReady", Run: r.reconcileHPA},
			reconcile.Step[*Widget]{Name: "NetworkPolicy", Condition: "NetworkPolicyReady", Run: r.reconcileNetworkPolicy},
		),
		reconcile.Step[*Widget]{Run: r.prune}, // unnamed: runs uninstrumented
	)
	if err != nil {
		return nil, err
	}
	r.pipeline, r.opts = p, reconcile.DefaultPassOptions(p.Conditions()...)
	return r, nil
}

// Reconcile is the controller-runtime entry point.
func (r *WidgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcile.RunPass(ctx, r.Client, req.NamespacedName, &Widget{}, r.opts,
		func(ctx context.Context, w *Widget) (ctrl.Result, error) {
			// The preamble (finalizers, deletion, target cluster) would go here.
			return r.pipeline.Run(ctx, w)
		})
}

func (r *WidgetReconciler) reconcileConfig(_ context.Context, w *Widget) (ctrl.Result, error) {
	reconcile.MarkTrue(w, "ConfigReady", "ConfigRendered", "")
	return ctrl.Result{}, nil
}

func (r *WidgetReconciler) reconcileHPA(_ context.Context, w *Widget) (ctrl.Result, error) {
	if w.Spec.Replicas < 2 {
		reconcile.MarkTrue(w, "HPAReady", "HPANotRequired", "")
		return ctrl.Result{}, nil
	}
	reconcile.MarkFalse(w, "HPAReady", "WaitingForHPA", "HPA has no metrics yet")
	return ctrl.Result{RequeueAfter: reconcile.DeploymentPollInterval}, nil
}

func (r *WidgetReconciler) reconcileNetworkPolicy(_ context.Context, w *Widget) (ctrl.Result, error) {
	reconcile.MarkTrue(w, "NetworkPolicyReady", "NetworkPolicyNotRequired", "")
	return ctrl.Result{RequeueAfter: reconcile.SecretPollInterval}, nil
}

func (r *WidgetReconciler) prune(context.Context, *Widget) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

// Example runs the WidgetReconciler twice against the test control plane: first with
// two replicas (the HPA is not ready, the group's shorter requeue wins), then with one.
func Example() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	// Widget is the test custom resource, defined in widget_test.go and served by env's CRDs.
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		panic(err)
	}
	w := &Widget{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: ns.Name}, Spec: WidgetSpec{Replicas: 2}}
	if err := env.Client.Create(ctx, w); err != nil {
		panic(err)
	}
	m, err := reconcile.NewMetrics(reconcile.DefaultMetricsOptions("widget_operator"))
	if err != nil {
		panic(err)
	}
	r, err := NewWidgetReconciler(env.Client, m)
	if err != nil {
		panic(err)
	}
	show := func() {
		res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w)})
		fmt.Printf("result: requeue after %v, error %v\n", res.RequeueAfter, err)
		stored := &Widget{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(w), stored); err != nil {
			panic(err)
		}
		for _, c := range stored.Status.Conditions {
			fmt.Println(strings.TrimSpace(fmt.Sprintf("  %s=%s %s %s", c.Type, c.Status, c.Reason, c.Message)))
		}
	}
	show()

	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
		panic(err)
	}
	w.Spec.Replicas = 1
	if err := env.Client.Update(ctx, w); err != nil {
		panic(err)
	}
	show()
	// Output:
	// result: requeue after 10s, error <nil>
	// ConfigReady=True ConfigRendered
	// HPAReady=False WaitingForHPA HPA has no metrics yet
	// NetworkPolicyReady=True NetworkPolicyNotRequired
	// Ready=False WaitingForHPA HPAReady is False: HPA has no metrics yet
	// result: requeue after 15s, error <nil>
	// ConfigReady=True ConfigRendered
	// HPAReady=True HPANotRequired
	// NetworkPolicyReady=True NetworkPolicyNotRequired
	// Ready=True AllReady all 3 sub-conditions are True
}

// ExamplePipeline_Run shows where a pass ends: at the first step that asks for a
// requeue, after the whole group has run.
func ExamplePipeline_Run() {
	// Widget is the test custom resource, defined in widget_test.go and served by env's CRDs.
	step := func(name string, res ctrl.Result) reconcile.Step[*Widget] {
		return reconcile.Step[*Widget]{Name: name, Condition: name + "Ready", Run: func(context.Context, *Widget) (ctrl.Result, error) {
			fmt.Println("run", name)
			return res, nil
		}}
	}
	p, err := reconcile.NewPipeline(nil,
		step("Secrets", ctrl.Result{}),
		reconcile.Sequential("Keys",
			step("FernetKeys", ctrl.Result{RequeueAfter: reconcile.SecretPollInterval}),
			step("CredentialKeys", ctrl.Result{RequeueAfter: reconcile.DeploymentPollInterval}),
		),
		step("Deployment", ctrl.Result{}),
	)
	if err != nil {
		panic(err)
	}
	res, err := p.Run(context.Background(), &Widget{})
	fmt.Println("requeue after", res.RequeueAfter, "error", err)
	// Output:
	// run Secrets
	// run FernetKeys
	// run CredentialKeys
	// requeue after 10s error <nil>
}

// ExampleAggregateReady shows Ready naming the sub-condition that holds it back.
func ExampleAggregateReady() {
	// Widget is the test custom resource, defined in widget_test.go and served by env's CRDs.
	subConditions := []string{"SecretsReady", "ConfigReady", "DeploymentReady"}
	w := &Widget{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	show := func() {
		reconcile.AggregateReady(w, reconcile.ConditionReady, subConditions)
		ready := meta.FindStatusCondition(w.Status.Conditions, reconcile.ConditionReady)
		fmt.Println(ready.Status, ready.Reason, ready.Message)
	}
	reconcile.MarkTrue(w, "SecretsReady", "SecretsAvailable", "")
	reconcile.MarkFalse(w, "DeploymentReady", "WaitingForDeployment", "1/3 replicas available")
	show()
	reconcile.MarkTrue(w, "ConfigReady", "ConfigRendered", "")
	show()
	reconcile.MarkTrue(w, "DeploymentReady", "DeploymentReady", "")
	show()
	// Output:
	// False Pending ConfigReady has not been reported
	// False WaitingForDeployment DeploymentReady is False: 1/3 replicas available
	// True AllReady all 3 sub-conditions are True
}
