// Package conformance_test runs the SDK's conformance suite against the Horizon
// operator.
package conformance_test

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/conformance"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/world"
)

// secretKey is the SECRET_KEY the world syncs: long enough for the Secrets check.
const secretKey = "horizon-conformance-secret-key-0123456789"

// loginPage is the dashboard's login page, as the health check's stand-in serves it.
var loginPage = testenv.Answer{ContentType: "text/html; charset=utf-8", Body: `<html><body><form method="post" action="/auth/login/"></form></body></html>`}

// startHorizonOperator runs the Horizon operator as cmd/main.go does (a multicluster
// manager, its resolver and NewReconciler), on the suite's namespace, logger and
// metrics registry, with the health check pointed at login.
func startHorizonOperator(login *testenv.StandIn) conformance.StartFunc {
	return conformance.StartOperator(controller.FieldManager, env.Scheme, func(ctx context.Context, mgr mcmanager.Manager,
		resolver *multicluster.ClusterResolver, run conformance.RunOptions) error {
		ropts := controller.DefaultOptions()
		ropts.Outbound, ropts.ProbeBase = login.Outbound(), login.URL("")
		if err := conformance.ObserveReconciler(run, mgr, controller.MetricsPrefix, &ropts); err != nil {
			return err
		}
		r, err := controller.NewReconciler(resolver, ropts)
		if err != nil {
			return err
		}
		return r.SetupWithManager(ctx, mgr)
	})
}

// readSample reads a Horizon of config/samples.
func readSample(t *testing.T, file string) *v1alpha1.Horizon {
	return testenv.ReadSample(t, "../config/samples/"+file, &v1alpha1.Horizon{})
}

// The Horizon operator keeps every promise of the suite, for the minimal sample and
// for the full one on the management cluster (its HTTPRoute, autoscalers and
// NetworkPolicy included); a converged pass sends no request at all, and a failed
// request of a row without a False reason (HPAReady, NetworkPolicyReady) returns its
// error.
func TestConformance(t *testing.T) {
	full := readSample(t, "horizon_v1alpha1_horizon_full.yaml")
	full.Spec.TargetClusterRef = nil // no target cluster registered here
	full.Spec.SecretStoreRef = nil   // the shared ClusterSecretStore
	badEndpoint := readSample(t, "horizon_v1alpha1_horizon_minimal.yaml")
	badEndpoint.Name, badEndpoint.Spec.KeystoneEndpoint = "bad-endpoint", "keystone.openstack.svc:5000"
	secretInExtra := readSample(t, "horizon_v1alpha1_horizon_minimal.yaml")
	secretInExtra.Name, secretInExtra.Spec.ExtraConfig = "secret-in-extra", map[string]string{"SECRET_KEY": "'x'"}
	conformance.Run(t, conformance.Options{
		Env:          env,
		FieldManager: controller.FieldManager,
		Start:        startHorizonOperator(testenv.NewStandIn(t, loginPage)),
		Samples:      []client.Object{readSample(t, "horizon_v1alpha1_horizon_minimal.yaml"), full},
		Invalid: []conformance.InvalidSample{
			{Object: badEndpoint, Field: "spec.keystoneEndpoint"},
			{Object: secretInExtra, Field: "spec.extraConfig"},
		},
		// The world plays ESO (the shared ClusterSecretStore, the SECRET_KEY under the
		// samples' properties) and the Gateway.
		MakeReady: world.New(env.Client, world.WithSecret("openstack/horizon/secret-key",
			map[string][]byte{"secret_key": []byte(secretKey), "key": []byte(secretKey)})).Play,
		ClusterRolePaths: []string{"../config/rbac/role.yaml"},
		ExpectNoRequests: true,
	})
}
