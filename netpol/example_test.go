package netpol_test

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/netpol"
)

// ExampleFlow is the NetworkPolicy step of a reconciler: build the policy from the
// custom resource's ingress rules (nil when it wants none) and run the flow; a step
// returns reconcile.Settle(cr, out, err).
func ExampleFlow() {
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
	key := client.ObjectKey{Namespace: ns.Name, Name: "dashboard"}
	policy := func(rules ...networkingv1.NetworkPolicyIngressRule) *networkingv1.NetworkPolicy {
		return &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "dashboard"}},
				Ingress:     rules,
			},
		}
	}
	fromGateways := networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "gateways"}}}}}

	out, err := netpol.Flow(ctx, c, scheme, owner, key, policy(fromGateways))
	fmt.Println(out.Condition.Status, out.Condition.Reason, err)

	_, err = netpol.Flow(ctx, c, scheme, owner, key, policy()) // the rules went missing
	fmt.Println("empty ingress refused:", errors.Is(err, netpol.ErrEmptyIngress))

	out, err = netpol.Flow(ctx, c, scheme, owner, key, nil)
	fmt.Println(out.Condition.Status, out.Condition.Reason, err)
	// Output:
	// True NetworkPolicyReady <nil>
	// empty ingress refused: true
	// True NetworkPolicyNotRequired <nil>
}
