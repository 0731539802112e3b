package controllers_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Example shows what testenv.Options{Controllers: true} (set in this package's
// TestMain) adds to envtest: a real garbage collector. Deleting an owner reclaims what
// it owns, with no simulator in the test.
func Example() {
	ctx := context.Background()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-owner-", Namespace: "default"}}
	if err := env.Client.Create(ctx, owner); err != nil {
		fmt.Println(err)
		return
	}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-child-", Namespace: "default"}}
	if err := controllerutil.SetControllerReference(owner, child, env.Scheme); err != nil {
		fmt.Println(err)
		return
	}
	if err := env.Client.Create(ctx, child); err != nil {
		fmt.Println(err)
		return
	}

	if err := env.Client.Delete(ctx, owner); err != nil {
		fmt.Println(err)
		return
	}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(child), &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), nil
	})
	fmt.Println("child collected with its owner:", err == nil)
	// Output: child collected with its owner: true
}
