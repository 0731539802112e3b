package httproute_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/c5c3/reconciler-sdk/httproute"
)

// ExampleFlow is the HTTPRoute step of a reconciler: build the route from the custom
// resource's gateway block and run the flow; a step returns reconcile.Settle(cr, out,
// err), which sets the condition and returns the requeue.
func ExampleFlow() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	// setAccepted (simulate_test.go) writes a Gateway's Accepted verdict into the route's status, as a Gateway controller would.
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
	key := client.ObjectKey{Namespace: ns.Name, Name: "dashboard"}
	gateway := &httproute.Spec{ // the CR's spec.gateway
		ParentRef: httproute.ParentRef{Name: "public", Namespace: "gateways"},
		Hostnames: []string{"dashboard.example.org"},
	}

	step := func(gateway *httproute.Spec) {
		var desired *gatewayv1.HTTPRoute
		if gateway != nil {
			r, err := httproute.Build(key, *gateway, httproute.Backend{ServiceName: "dashboard", Port: 8080})
			if err != nil {
				panic(err)
			}
			desired = r
		}
		out, err := httproute.Flow(ctx, c, scheme, owner, key, desired)
		if err != nil {
			panic(err)
		}
		fmt.Println(out.Condition.Status, out.Condition.Reason, "requeue:", out.Result.RequeueAfter)
	}

	step(gateway)
	// The Gateway controller accepts the route (simulated here).
	if err := setAccepted(ctx, c, key, metav1.ConditionTrue, "Accepted", "Route is accepted"); err != nil {
		panic(err)
	}
	step(gateway)
	step(nil) // spec.gateway removed
	// Output:
	// False HTTPRouteNotAccepted requeue: 10s
	// True HTTPRouteAccepted requeue: 0s
	// True HTTPRouteNotRequired requeue: 0s
}

// ExampleSpecFlow is the same HTTPRoute step in one call: the custom resource's gateway
// block (nil: no route), the backend Service and the labels of its children.
func ExampleSpecFlow() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	ctx := context.Background()
	c, scheme := env.Client, env.Scheme
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := c.Create(ctx, ns); err != nil {
		panic(err)
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "identity", Namespace: ns.Name}}
	if err := c.Create(ctx, owner); err != nil {
		panic(err)
	}
	key := client.ObjectKey{Namespace: ns.Name, Name: "identity"}
	backend := httproute.Backend{ServiceName: "identity", Port: 5000}
	labels := map[string]string{"app.kubernetes.io/instance": "identity"}
	gateway := &httproute.Spec{ParentRef: httproute.ParentRef{Name: "public", Namespace: "gateways"}, Path: "/v3"}

	for _, g := range []*httproute.Spec{gateway, nil} { // spec.gateway set, then removed
		out, err := httproute.SpecFlow(ctx, c, scheme, owner, key, g, backend, labels)
		if err != nil {
			panic(err)
		}
		fmt.Println(out.Condition.Status, out.Condition.Reason, "requeue:", out.Result.RequeueAfter)
	}
	// Output:
	// False HTTPRouteNotAccepted requeue: 10s
	// True HTTPRouteNotRequired requeue: 0s
}
