package multicluster_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
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

// GateTarget runs ahead of every step: a CR whose target cluster does not resolve gets
// TargetClusterUnavailable on its first condition, the pass requeues, and nothing is
// written anywhere.
func ExampleGateTarget() {
	var conds []metav1.Condition
	ref := &commonv1.TargetClusterRefSpec{Name: "edge-1"}
	target, result, err := multicluster.GateTarget(context.Background(), unregistered{}, ref, &conds, 3, "SecretsReady")
	fmt.Println(target == nil, result.RequeueAfter, err)
	c := meta.FindStatusCondition(conds, "SecretsReady")
	fmt.Println(c.Status, c.Reason, c.ObservedGeneration)
	fmt.Println(c.Message)

	// A CR without a target cluster passes the gate onto the management cluster.
	target, _, _ = multicluster.GateTarget(context.Background(), unregistered{}, nil, &conds, 3, "SecretsReady")
	fmt.Println(target.IsLocal())
	// Output:
	// true 15s <nil>
	// False TargetClusterUnavailable 3
	// target cluster "edge-1" is not registered
	// true
}

// Each target cluster a CR's children may live on is one finalizer on the CR.
func ExampleFinalizerFor() {
	fmt.Println(multicluster.FinalizerFor("edge-1"))
	// Output: target-cluster.cobaltcore.c5c3.io/edge-1
}
