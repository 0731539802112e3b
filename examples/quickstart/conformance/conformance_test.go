// Package conformance_test runs the SDK's conformance suite against the quick-start
// operator.
package conformance_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/conformance"
	"github.com/c5c3/reconciler-sdk/examples/quickstart/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/quickstart/controller"
	"github.com/c5c3/reconciler-sdk/operator"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// startMemoOperator runs the quick-start operator as cmd/main.go does (operator.Run: an
// Applier over a cache of the operator's own ConfigMaps and Secrets, Secrets read past
// it), on the suite's namespace, logger and metrics registry. The controller's watches
// are those of MemoReconciler.SetupWithManager, registered here so that the reconciler
// is the one the suite wrapped.
func startMemoOperator(ctx context.Context, cfg *rest.Config, run conformance.RunOptions) error {
	return operator.Run(ctx, cfg, run.OperatorOptions(controller.FieldManager, env.Scheme).Operator(), func(_ context.Context, op operator.Operator) error {
		metrics, err := run.Metrics("memo_operator")
		if err != nil {
			return err
		}
		r, err := controller.NewMemoReconciler(op.Applier, op.Scheme, op.APIReader, metrics)
		if err != nil {
			return err
		}
		return ctrl.NewControllerManagedBy(op.Manager).Named(run.Name).
			For(&v1alpha1.Memo{}, builder.WithPredicates(reconcile.IgnoreStatusWrites())).
			Owns(&appsv1.Deployment{}).Owns(&corev1.Service{}).Owns(&corev1.ConfigMap{}).
			Complete(run.Wrap(r))
	})
}

// sampleMemo reads the sample Memo of config/samples.
func sampleMemo(t *testing.T) *v1alpha1.Memo {
	return testenv.ReadSample(t, "../config/samples/quickstart_v1alpha1_memo.yaml", &v1alpha1.Memo{})
}

// The quick-start operator keeps every promise of the suite; a converged pass sends no
// request at all.
func TestConformance(t *testing.T) {
	badPort := sampleMemo(t)
	badPort.Name, badPort.Spec.Port = "bad-port", 70000
	badLevel := sampleMemo(t)
	badLevel.Name, badLevel.Spec.LogLevel = "bad-level", "verbose"
	conformance.Run(t, conformance.Options{
		Env:          env,
		FieldManager: controller.FieldManager,
		Start:        startMemoOperator,
		Samples:      []client.Object{sampleMemo(t)},
		Invalid: []conformance.InvalidSample{
			{Object: badPort, Field: "spec.port"},
			{Object: badLevel, Field: "spec.logLevel"},
		},
		SubConditions:    []string{"ConfigReady", "DeploymentReady", "ServiceReady"},
		ClusterRolePaths: []string{"../config/rbac/role.yaml"},
		ExpectNoRequests: true,
		// operator.Run, the single-cluster bootstrap, runs one active replica (leader
		// election); N active replicas are multicluster.RunOperator's --sharded.
		Skip: map[string]string{conformance.CheckSharded: "operator.Run runs one active replica; sharding is multicluster.RunOperator's"},
	})
}
