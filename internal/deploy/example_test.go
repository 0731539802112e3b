package deploy_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/c5c3/reconciler-sdk/internal/deploy"
)

// Build renders the quick-start operator's config/default with the manager's image
// set; Apply would then apply the objects in the order Ordered prints (deploy.Apply(ctx,
// c, objs, deploy.ApplyOptions{})), and Delete take them out again.
func ExampleBuild() {
	objs, err := deploy.Build("../../examples/quickstart/config/default", deploy.BuildOptions{Image: "registry.example/memo-operator:v1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, obj := range deploy.Ordered(objs) {
		fmt.Println(deploy.Describe(obj))
		if obj.GetKind() == "Deployment" {
			containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			fmt.Println("  image:", containers[0].(map[string]any)["image"])
		}
	}
	// Output:
	// Namespace quickstart-system
	// CustomResourceDefinition.apiextensions.k8s.io memos.quickstart.reconciler-sdk.c5c3.io
	// ServiceAccount quickstart-system/quickstart-controller-manager
	// ClusterRole.rbac.authorization.k8s.io quickstart-memo-operator
	// ClusterRoleBinding.rbac.authorization.k8s.io quickstart-manager-rolebinding
	// Role.rbac.authorization.k8s.io quickstart-system/quickstart-leader-election-role
	// RoleBinding.rbac.authorization.k8s.io quickstart-system/quickstart-leader-election-rolebinding
	// ClusterRole.rbac.authorization.k8s.io quickstart-metrics-auth-role
	// ClusterRoleBinding.rbac.authorization.k8s.io quickstart-metrics-auth-rolebinding
	// ClusterRole.rbac.authorization.k8s.io quickstart-metrics-reader
	// Deployment.apps quickstart-system/quickstart-controller-manager
	//   image: registry.example/memo-operator:v1
	// Service quickstart-system/quickstart-controller-manager-metrics-service
}
