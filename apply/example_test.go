package apply_test

import (
	"context"
	"fmt"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// ExampleEnsureObject applies a ConfigMap owned by another object. In a reconciler the
// client and scheme come from the manager (mgr.GetClient(), mgr.GetScheme()) and the
// owner is the custom resource being reconciled.
func ExampleEnsureObject() {
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

	// Build the desired state from scratch on every reconcile.
	desired := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "identity-config", Namespace: ns.Name},
			Data:       map[string]string{"identity.conf": "[DEFAULT]\ndebug = false\n"},
		}
	}

	cm := desired()
	if err := apply.EnsureObject(ctx, c, scheme, owner, cm, apply.FieldManager); err != nil {
		panic(err)
	}
	fmt.Println("controller:", metav1.GetControllerOf(cm).Name)

	rv := cm.ResourceVersion
	again := desired()
	if err := apply.EnsureObject(ctx, c, scheme, owner, again, apply.FieldManager); err != nil {
		panic(err)
	}
	fmt.Println("converged apply wrote:", again.ResourceVersion != rv)
	// Output:
	// controller: owner
	// converged apply wrote: false
}

// ExampleClaimLabels shows how children on a target cluster are claimed: an Applier with
// RemoteOwnership writes the claim labels and annotation instead of an owner reference
// (SetOwnership, which every helper of the SDK calls before it writes a child), ClaimOf
// reads the claim back, and ClaimLabels selects the owner's children for a sweep.
func ExampleClaimLabels() {
	remote := apply.RemoteOwnership{ManagementCluster: "mgmt-a"}
	// In an operator: apply.NewApplier(targetCluster.GetClient(), apply.ApplierOptions{...}).
	target := apply.NewApplier(env.Client, apply.ApplierOptions{FieldManager: "identity-operator", Remote: &remote})

	owner := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "openstack",
		Name: "identity-with-a-name-longer-than-a-label-value-may-be-in-kubernetes"}}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "openstack", Name: "identity-config"}}
	if err := apply.SetOwnership(target, env.Scheme, owner, child); err != nil {
		panic(err)
	}
	for _, k := range slices.Sorted(maps.Keys(child.Labels)) {
		fmt.Printf("label %s=%s\n", k, child.Labels[k])
	}
	fmt.Println("annotation:", child.Annotations[apply.OwnerAnnotation])
	fmt.Println("owner references:", len(child.OwnerReferences))

	claim, ok := apply.ClaimOf(child)
	fmt.Println("claim:", claim, ok)

	// Sweep the owner's children: list by the claim labels.
	selector := client.MatchingLabels(apply.ClaimLabels(remote, appsv1.SchemeGroupVersion.WithKind("Deployment"), owner))
	fmt.Println("selects the child:", labels.SelectorFromSet(labels.Set(selector)).Matches(labels.Set(child.Labels)))
	// Output:
	// label cobaltcore.c5c3.io/owner-cluster=mgmt-a
	// label cobaltcore.c5c3.io/owner-kind=Deployment.apps
	// label cobaltcore.c5c3.io/owner-name=identity-with-a-name-longer-than-a-label-value-may-b-3f04359f2e
	// label cobaltcore.c5c3.io/owner-namespace=openstack
	// annotation: Deployment.apps/openstack/identity-with-a-name-longer-than-a-label-value-may-be-in-kubernetes
	// owner references: 0
	// claim: Deployment.apps/openstack/identity-with-a-name-longer-than-a-label-value-may-be-in-kubernetes of management cluster "mgmt-a" true
	// selects the child: true
}
