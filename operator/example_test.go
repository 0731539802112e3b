package operator_test

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/operator"
)

// Run runs an operator's controllers until its context ends: here a controller,
// registered with a plain ctrl.Builder, that stops the operator once it has seen the
// ServiceAccount "greeter".
func ExampleRun() {
	opts := operator.DefaultOptions()
	opts.FieldManager = "greeter-operator"
	opts.LeaderElectionID = "greeter-operator.example.c5c3.io"
	scheme, err := operator.NewScheme() // plus the operator's own AddToScheme functions
	if err != nil {
		panic(err)
	}
	opts.Manager.Scheme = scheme
	// main binds the flags (opts.BindFlags(flag.CommandLine)) and calls flag.Parse(); here
	// the values are set as --namespace default --metrics-bind-address 0
	// --health-probe-bind-address 0 --leader-elect=false (a local run) would.
	opts.Namespace = "default"
	opts.MetricsBindAddress, opts.HealthProbeBindAddress = "0", "0"
	opts.LeaderElect = false
	opts.Manager.Controller.SkipNameValidation = ptr.To(true)

	ctx, stop := context.WithCancel(context.Background()) // main: ctrl.SetupSignalHandler()
	var once sync.Once
	err = operator.Run(ctx, env.Config, opts, func(ctx context.Context, op operator.Operator) error {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "greeter"}}
		if err := op.APIReader.Get(ctx, client.ObjectKeyFromObject(sa), sa); err != nil {
			if err := env.Client.Create(ctx, sa); err != nil {
				return err
			}
		}
		return ctrl.NewControllerManagedBy(op.Manager).Named("greeter").For(&corev1.ServiceAccount{}).
			Complete(crreconcile.Func(func(_ context.Context, req ctrl.Request) (ctrl.Result, error) {
				if req.Name == "greeter" {
					once.Do(func() { fmt.Println("reconciled", req.NamespacedName); stop() })
				}
				return ctrl.Result{}, nil
			}))
	})
	fmt.Println("Run returned", err)
	// Output:
	// reconciled default/greeter
	// Run returned <nil>
}
