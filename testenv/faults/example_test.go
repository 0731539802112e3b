package faults_test

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// ExampleInjector fails the second Get and the first Create (with a timeout, after
// the Create was served) of a client on the package's control plane.
func ExampleInjector() {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		panic(err)
	}
	inj := faults.NewInjector()
	c := inj.Client(env.Client)
	key := client.ObjectKey{Namespace: ns.Name, Name: "settings"}

	inj.Arm(faults.VerbGet, 2, faults.Internal)
	for range 2 {
		err := c.Get(ctx, key, &corev1.ConfigMap{})
		fmt.Println("get:", apierrors.IsNotFound(err), errors.Is(err, faults.ErrInjected), apierrors.IsInternalError(err))
	}

	inj.Arm(faults.VerbCreate, 1, faults.Timeout)
	err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}})
	fmt.Println("create:", errors.Is(err, context.DeadlineExceeded), errors.Is(err, faults.ErrInjected))
	fmt.Println("served anyway:", env.Client.Get(ctx, key, &corev1.ConfigMap{}) == nil, inj.Calls(faults.VerbCreate))
	// Output:
	// get: true false false
	// get: false true true
	// create: true true
	// served anyway: true 1
}
