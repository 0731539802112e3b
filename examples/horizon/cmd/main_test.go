package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/reconcile"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	scheme, err := testenv.NewSchemeWith(v1alpha1.AddToScheme)
	if err != nil {
		panic(err)
	}
	os.Exit(testenv.Main(m, testenv.Options{Scheme: scheme, CRDPaths: []string{"../config/crd/bases"},
		WebhookPaths: []string{"../config/webhook"}, Controllers: true}, &env))
}

// TestRun runs the command's run, given only a rest.Config and its flags, as the operator
// of one namespace with the admission webhook.
//
// reconcilesAHorizon: the command reconciles a Horizon of its
// namespace on a real control plane: every step up to the Deployment turns True. The
// health check requests the cluster-local Service URL, which this machine cannot
// resolve or reach, so HorizonAPIReady stays False for a reason of its table.
func TestRun(t *testing.T) {
	ns := env.Namespace(t)
	// One run per process: it registers the controller and its metrics globally.
	testenv.Go(t, func(ctx context.Context) error {
		f := defaultFlags()
		f.MetricsBindAddress, f.HealthProbeBindAddress, f.Namespace = "0", "0", ns
		f.LeaderElect = false // a local run
		return run(ctx, env.Config, webhookFlags(t, f))
	})
	if err := env.WaitForWebhookServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Run("reconciles a Horizon", func(t *testing.T) { reconcilesAHorizon(t, ns) })
	t.Run("serves the webhook", func(t *testing.T) { servesTheWebhook(t, ns) })
}

func reconcilesAHorizon(t *testing.T, ns string) {
	ctx := context.Background()

	store := &esov1.SecretStore{
		ObjectMeta: metav1.ObjectMeta{Name: "openbao", Namespace: ns},
		Spec: esov1.SecretStoreSpec{Provider: &apiextensionsv1.JSON{
			Raw: []byte(`{"vault":{"server":"http://openbao.openbao.svc:8200","path":"secret","version":"v2"}}`)}},
	}
	if err := env.Client.Create(ctx, store); err != nil {
		t.Fatal(err)
	}
	if _, err := testenv.MarkSecretStoreReady(ctx, env.Client, client.ObjectKeyFromObject(store)); err != nil {
		t.Fatal(err)
	}
	h := &v1alpha1.Horizon{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dashboard"},
		Spec: v1alpha1.HorizonSpec{
			Image:            "registry.example/horizon:2025.1",
			KeystoneEndpoint: "http://keystone.openstack.svc:5000/v3",
			SecretKey:        v1alpha1.SecretKeySpec{RemoteKey: "horizon/secret-key"},
			SecretStoreRef:   &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: store.Name},
		},
	}
	if err := env.Client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	esKey := client.ObjectKey{Namespace: ns, Name: controller.SecretKeyName(h)}
	poll(t, "ExternalSecret synced", func(ctx context.Context) bool {
		_, err := testenv.MarkExternalSecretSynced(ctx, env.Client, esKey,
			map[string][]byte{controller.SecretKeyDataKey: []byte("k")})
		return err == nil
	})
	poll(t, "every step up to the Deployment True, HorizonAPIReady False", func(ctx context.Context) bool {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(h), h); err != nil {
			return false
		}
		for _, c := range []string{controller.ConditionSecretsReady, controller.ConditionConfigReady,
			controller.ConditionDeploymentReady} {
			if !reconcile.IsTrue(h, c) {
				return false
			}
		}
		api := meta(h, controller.ConditionHorizonAPIReady)
		t.Logf("conditions: %s", testenv.DescribeConditions(h.Generation, h.Status.Conditions))
		return api != nil && api.Status == metav1.ConditionFalse &&
			(api.Reason == "EndpointNotReady" || api.Reason == "ConnectionFailed" || api.Reason == "HealthCheckTimeout")
	})
	if h.Status.Endpoint != controller.Endpoint(h) {
		t.Fatalf("status.endpoint = %q, want %q", h.Status.Endpoint, controller.Endpoint(h))
	}
}

func meta(h *v1alpha1.Horizon, condType string) *metav1.Condition {
	for i := range h.Status.Conditions {
		if h.Status.Conditions[i].Type == condType {
			return &h.Status.Conditions[i]
		}
	}
	return nil
}

func poll(t *testing.T, what string, cond func(ctx context.Context) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 90*time.Second, true,
		func(ctx context.Context) (bool, error) { return cond(ctx), nil })
	if err != nil {
		t.Fatalf("%s: not within 90s", what)
	}
}

// webhookFlags serves the admission webhook where the API server of env calls it.
func webhookFlags(t *testing.T, f flags) flags {
	wo, ok := env.WebhookServerOptions()
	if !ok {
		t.Fatal("the control plane installed no webhooks")
	}
	if wo.Host != "" && wo.Host != "127.0.0.1" && wo.Host != "localhost" {
		t.Fatalf("webhook host %q: the command listens on every address", wo.Host)
	}
	f.webhookCertDir, f.webhookPort = wo.CertDir, wo.Port
	return f
}

// servesTheWebhook: with --webhook-cert-dir the command serves the admission webhook:
// a Horizon that declares a typed single sign-on setting again in extraConfig is refused, naming both
// fields, and one without a store reference gets the default store.
func servesTheWebhook(t *testing.T, ns string) {
	ctx := context.Background()
	h := &v1alpha1.Horizon{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sso"},
		Spec: v1alpha1.HorizonSpec{
			Image:            "registry.example/horizon:2025.1",
			KeystoneEndpoint: "http://keystone.openstack.svc:5000/v3",
			SecretKey:        v1alpha1.SecretKeySpec{RemoteKey: "horizon/secret-key"},
			WebSSO:           &v1alpha1.WebSSOSpec{Enabled: true, Choices: []v1alpha1.WebSSOChoice{{ID: "oidc", Label: "SSO"}}},
			ExtraConfig:      map[string]string{"WEBSSO_CHOICES": `(("x", "y"),)`},
		},
	}
	var err error
	poll(t, "the webhook answers", func(ctx context.Context) bool {
		err = env.Client.Create(ctx, h.DeepCopy())
		return err != nil && strings.Contains(err.Error(), "spec.extraConfig.WEBSSO_CHOICES")
	})
	if !strings.Contains(err.Error(), "spec.websso.choices") {
		t.Fatalf("refusal %q does not name spec.websso.choices", err)
	}
	h.Spec.ExtraConfig = nil
	if err := env.Client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	if h.Spec.SecretStoreRef == nil || h.Spec.SecretStoreRef.Name != "openbao-cluster-store" {
		t.Fatalf("spec.secretStoreRef = %+v, want the default store", h.Spec.SecretStoreRef)
	}
}
