// Package conformance_test runs the SDK's conformance suite against the Horizon
// operator.
package conformance_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/reconciler-sdk/conformance"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// secretKey is the SECRET_KEY MakeReady syncs: long enough for the Secrets check.
const secretKey = "horizon-conformance-secret-key-0123456789"

// startHorizonOperator runs the Horizon operator as cmd/main.go does (a multicluster
// manager, its resolver and NewReconciler), on the suite's namespace, logger and
// metrics registry, with the health check pointed at a stand-in login page.
func startHorizonOperator(login string) func(context.Context, *rest.Config, conformance.RunOptions) error {
	return func(ctx context.Context, cfg *rest.Config, run conformance.RunOptions) error {
		return multicluster.RunOperator(ctx, cfg, run.OperatorOptions(controller.FieldManager, env.Scheme), func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
			ropts := controller.DefaultOptions()
			var err error
			if ropts.Metrics, err = run.Metrics(controller.MetricsPrefix); err != nil {
				return err
			}
			ropts.Recorder = mgr.GetLocalManager().GetEventRecorder(controller.FieldManager)
			ropts.Outbound = outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes} // the login page listens on loopback
			ropts.ProbeURL = func(h *v1alpha1.Horizon) string {
				if h.Status.Endpoint == "" {
					return ""
				}
				return login + controller.LoginPath
			}
			ropts.Wrap = run.Wrap
			r, err := controller.NewReconciler(resolver, ropts)
			if err != nil {
				return err
			}
			return r.SetupWithManager(ctx, mgr)
		})
	}
}

// makeHorizonReady plays External Secrets and the Gateway: the shared
// ClusterSecretStore is Ready, the SECRET_KEY ExternalSecret synced and the HTTPRoute
// accepted. Each is written only when it is not already so, so that a poll does not
// wake the operator for nothing.
func makeHorizonReady(ctx context.Context, c client.Client, cr client.Object) error {
	h, ok := cr.(*v1alpha1.Horizon)
	if !ok {
		return fmt.Errorf("MakeReady got a %T, want a *v1alpha1.Horizon", cr)
	}
	store := &esov1.ClusterSecretStore{
		ObjectMeta: metav1.ObjectMeta{Name: secrets.OpenBaoClusterStoreName},
		Spec: esov1.SecretStoreSpec{Provider: &apiextensionsv1.JSON{
			Raw: []byte(`{"vault":{"server":"http://openbao.openbao.svc:8200","path":"secret","version":"v2"}}`)}},
	}
	if err := c.Create(ctx, store); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if _, err := testenv.MarkClusterSecretStoreReady(ctx, c, secrets.OpenBaoClusterStoreName); err != nil {
		return err
	}
	es := &esov1.ExternalSecret{}
	esKey := client.ObjectKey{Namespace: h.Namespace, Name: controller.SecretKeyName(h)}
	if err := c.Get(ctx, esKey, es); err != nil {
		return err // not written yet: the next poll tries again
	}
	if !esSynced(es) || !secretWritten(ctx, c, esKey) {
		if _, err := testenv.MarkExternalSecretSynced(ctx, c, esKey, map[string][]byte{controller.SecretKeyDataKey: []byte(secretKey)}); err != nil {
			return err
		}
	}
	if h.Spec.Gateway == nil {
		return nil
	}
	route := &gatewayv1.HTTPRoute{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: h.Namespace, Name: h.Name}, route); err != nil {
		return err
	}
	for _, p := range route.Status.Parents {
		if c := meta.FindStatusCondition(p.Conditions, string(gatewayv1.RouteConditionAccepted)); c != nil &&
			c.Status == metav1.ConditionTrue && c.ObservedGeneration == route.Generation {
			return nil
		}
	}
	_, err := testenv.SetHTTPRouteAccepted(ctx, c, client.ObjectKeyFromObject(route), metav1.ConditionTrue, "Accepted", "accepted", 0)
	return err
}

// esSynced reports whether the ExternalSecret is Ready for its current generation.
func esSynced(es *esov1.ExternalSecret) bool {
	for _, c := range es.Status.Conditions {
		if c.Type == esov1.ExternalSecretReady {
			return c.Status == "True" && es.Status.SyncedResourceVersion != "" &&
				es.Status.SyncedResourceVersion[:len(fmt.Sprint(es.Generation))+1] == fmt.Sprint(es.Generation)+"-"
		}
	}
	return false
}

// secretWritten reports whether the ExternalSecret's target Secret holds the key.
func secretWritten(ctx context.Context, c client.Client, key client.ObjectKey) bool {
	s := &corev1.Secret{}
	if err := c.Get(ctx, key, s); err != nil {
		return false
	}
	return len(s.Data[controller.SecretKeyDataKey]) > 0
}

// readSample reads a Horizon of config/samples.
func readSample(t *testing.T, file string) *v1alpha1.Horizon {
	t.Helper()
	data, err := os.ReadFile("../config/samples/" + file)
	if err != nil {
		t.Fatal(err)
	}
	h := &v1alpha1.Horizon{}
	if err := yaml.UnmarshalStrict(data, h); err != nil {
		t.Fatal(err)
	}
	return h
}

// newLoginPage serves the dashboard's login page for the health check.
func newLoginPage(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprint(w, `<html><body><form method="post" action="/auth/login/"></form></body></html>`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
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
		Start:        startHorizonOperator(newLoginPage(t)),
		Samples:      []client.Object{readSample(t, "horizon_v1alpha1_horizon_minimal.yaml"), full},
		Invalid: []conformance.InvalidSample{
			{Object: badEndpoint, Field: "spec.keystoneEndpoint"},
			{Object: secretInExtra, Field: "spec.extraConfig"},
		},
		MakeReady:        makeHorizonReady,
		ClusterRolePaths: []string{"../config/rbac/role.yaml"},
		ExpectNoRequests: true,
	})
}
