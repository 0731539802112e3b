package child_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/child"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// ExampleReconcile is an optional child step: the descriptor names the child, whether
// it is wanted and the condition's wording; a step hands the outcome over with
// reconcile.Settle.
func ExampleReconcile() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	ctx := context.Background()
	c, scheme := env.Client, env.Scheme
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := c.Create(ctx, ns); err != nil {
		panic(err)
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns.Name}}
	if err := c.Create(ctx, owner); err != nil {
		panic(err)
	}
	flow := func(wanted bool) (reconcile.Outcome, error) {
		var desired *corev1.ConfigMap
		if wanted {
			desired = &corev1.ConfigMap{Data: map[string]string{"greeting": "hello"}}
		}
		return child.Reconcile(ctx, c, scheme, owner, child.Optional[*corev1.ConfigMap]{
			Key:         client.ObjectKey{Namespace: ns.Name, Name: "greeting"},
			Desired:     desired,
			Type:        "GreetingReady",
			Ready:       "GreetingApplied",
			NotRequired: child.Reason{Reason: "GreetingNotRequired", Message: "no greeting configured"},
		})
	}
	for _, wanted := range []bool{true, false} {
		out, err := flow(wanted)
		fmt.Println(out.Condition.Status, out.Condition.Reason, out.Continue(), err)
	}
	// Output:
	// True GreetingApplied true <nil>
	// True GreetingNotRequired true <nil>
}
