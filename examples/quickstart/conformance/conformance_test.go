// Package conformance_test runs the SDK's conformance suite against the quick-start
// operator.
package conformance_test

import (
	"context"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/conformance"
	"github.com/c5c3/reconciler-sdk/examples/quickstart/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/quickstart/controller"
	"github.com/c5c3/reconciler-sdk/operator"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// startMemoOperator runs the quick-start operator as cmd/main.go does (operator.Run: an
// Applier over a cache of the operator's own ConfigMaps and Secrets, Secrets read past
// it; with RunOptions.Sharded a member of a shard ring), on the suite's namespace, logger
// and metrics registry. The controller is registered with controller.Register, as
// main's, with the reconciler the suite wrapped.
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
		return controller.Register(op, run.Name, run.Wrap(r))
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
	})
}
