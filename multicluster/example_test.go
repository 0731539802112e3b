package multicluster_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/multicluster"
)

// unregistered is a Resolver that knows no target cluster, as a ClusterResolver does
// before the cluster's kubeconfig Secret is created.
type unregistered struct{}

func (unregistered) Resolve(_ context.Context, ref *commonv1.TargetClusterRefSpec) (*multicluster.Target, error) {
	if ref == nil {
		return &multicluster.Target{}, nil
	}
	return nil, &multicluster.UnavailableError{Cluster: ref.Name, Reason: "is not registered"}
}

// TargetGate runs ahead of every step: a CR whose target cluster does not resolve gets
// TargetClusterUnavailable on the step's condition and a requeue (reconcile.Settle sets
// them), and nothing is written anywhere.
func ExampleTargetGate() {
	cr := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dashboard", Namespace: "openstack"}}
	ref := &commonv1.TargetClusterRefSpec{Name: "edge-1"}
	g, err := multicluster.TargetGate(context.Background(), unregistered{}, cr, "SecretsReady", ref)
	fmt.Println(g.Target == nil, g.Result.RequeueAfter, err)
	fmt.Println(g.Condition.Status, g.Condition.Reason)
	fmt.Println(g.Condition.Message)

	// A CR without a target cluster passes the gate onto the management cluster.
	g, _ = multicluster.TargetGate(context.Background(), unregistered{}, cr, "SecretsReady", nil)
	fmt.Println(g.Target.IsLocal(), g.Continue())
	// Output:
	// true 15s <nil>
	// False TargetClusterUnavailable
	// target cluster "edge-1" is not registered
	// true true
}

// Each target cluster a CR's children may live on is one finalizer on the CR.
func ExampleFinalizerFor() {
	fmt.Println(multicluster.FinalizerFor("edge-1"))
	// Output: target-cluster.cobaltcore.c5c3.io/edge-1
}
