package apply_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
			ObjectMeta: metav1.ObjectMeta{Name: "keystone-config", Namespace: ns.Name},
			Data:       map[string]string{"keystone.conf": "[DEFAULT]\ndebug = false\n"},
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
