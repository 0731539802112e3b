package testenv

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// FakeNodeName is the name of the one Node that [Options.Controllers] registers
	// and kwok keeps Ready; every pod of the environment is scheduled onto it.
	FakeNodeName = "kwok-node-0"
	// FakeNodeAnnotation is the annotation (with value "fake") that tells kwok to
	// manage a Node.
	FakeNodeAnnotation = "kwok.x-k8s.io/node"

	// kwokNodeIP is the InternalIP kwok reports for the fake node.
	kwokNodeIP = "10.243.0.1"
	// kwokPodCIDR is the range kwok takes pod IPs from; it stays clear of envtest's
	// service range 10.0.0.0/24.
	kwokPodCIDR = "10.244.0.0/16"
)

// KWOKStages returns the kwok Stage documents that [Options.Controllers] uses, read
// from the kwok module at [KWOKVersion]:
//   - node-initialize makes a managed Node Ready, node-heartbeat keeps it so;
//   - pod-ready turns a scheduled pod Running with every container ready;
//   - pod-complete turns a Running pod owned by a Job into Succeeded (exit code 0);
//   - pod-delete removes a pod once it has a deletionTimestamp (there is no kubelet
//     to confirm the deletion).
func KWOKStages() CRDSource {
	return CRDSource{Module: KWOKModule, Version: KWOKVersion, Files: []string{
		"kustomize/stage/node/fast/node-initialize.yaml",
		"kustomize/stage/node/heartbeat/node-heartbeat.yaml",
		"kustomize/stage/pod/fast/pod-ready.yaml",
		"kustomize/stage/pod/fast/pod-complete.yaml",
		"kustomize/stage/pod/fast/pod-delete.yaml",
	}}
}

// kwokArgs are the kwok flags for kubeconfig and the Stage files.
func kwokArgs(kubeconfig string, stages []string) []string {
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + FakeNodeAnnotation + "=fake",
		"--node-ip=" + kwokNodeIP,
		"--cidr=" + kwokPodCIDR,
	}
	for _, s := range stages {
		args = append(args, "--config="+s)
	}
	return args
}

// fakeNode is the Node kwok manages. Its capacity leaves room for any test's pods.
func fakeNode() *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("1000"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        FakeNodeName,
			Annotations: map[string]string{FakeNodeAnnotation: "fake"},
			Labels: map[string]string{
				corev1.LabelHostname:   FakeNodeName,
				corev1.LabelOSStable:   "linux",
				corev1.LabelArchStable: "amd64",
				"type":                 "kwok",
			},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity.DeepCopy()},
	}
}

// nodeReady reports whether node's Ready condition is True.
func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// untaintNotReady removes the node.kubernetes.io/not-ready taints that the API server
// puts on every new Node: no node-lifecycle controller runs to lift them once kwok
// has made the node Ready, and the scheduler would place no pod while they stay.
func untaintNotReady(ctx context.Context, c client.Client, name string) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			return err
		}
		taints := slices.DeleteFunc(slices.Clone(node.Spec.Taints), func(t corev1.Taint) bool {
			return t.Key == corev1.TaintNodeNotReady
		})
		if len(taints) == len(node.Spec.Taints) {
			return nil
		}
		node.Spec.Taints = taints
		return c.Update(ctx, node)
	})
	if err != nil {
		return fmt.Errorf("testenv: remove taint %s from Node %s: %w", corev1.TaintNodeNotReady, name, err)
	}
	return nil
}
