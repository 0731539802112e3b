package main

import (
	"context"
	"flag"
	"io"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/health"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
	"github.com/c5c3/reconciler-sdk/testenv/world"
)

// env is the control plane without controllers: the test's world plays the Deployment.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{v1alpha1.AddToScheme},
		CRDPaths: []string{"../config/crd/bases"}, WebhookPaths: []string{"../config/webhook"}}, &env))
}

// TestRun runs the command's run, given only a rest.Config and its options, as the
// operator of one namespace (--namespace) with the admission webhook served where the
// API server calls it (--webhook-cert-path, --webhook-port). One run per process: it
// registers the controller and its metrics globally.
func TestRun(t *testing.T) {
	ns := env.Namespace(t)
	opts := defaultOptions()
	opts.Namespace, opts.LeaderElect, opts.MetricsBindAddress, opts.HealthProbeBindAddress = ns, false, "0", "0"
	opts.WebhookCertDir, opts.WebhookPort = env.WebhookFlags(t)
	testenv.Go(t, func(ctx context.Context) error { return run(ctx, env.Config, opts, controller.DefaultOptions()) })
	if err := env.WaitForWebhookServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Run("reconciles a Horizon", func(t *testing.T) { reconcilesAHorizon(t, ns) })
	t.Run("serves the webhook", func(t *testing.T) { servesTheWebhook(t, ns) })
}

// reconcilesAHorizon: the command reconciles a Horizon of its namespace, reading its
// SECRET_KEY through a SecretStore of that namespace, on a real API server: every step
// up to the Deployment (rolled out by the world) turns True. The health check requests
// the cluster-local Service URL, which this machine cannot resolve or reach, so
// HorizonAPIReady stays False for a reason of its table.
func reconcilesAHorizon(t *testing.T, ns string) {
	store := &esov1.SecretStore{
		ObjectMeta: metav1.ObjectMeta{Name: "openbao", Namespace: ns},
		Spec:       esov1.SecretStoreSpec{Provider: simulate.OpenBaoProvider()},
	}
	h := newHorizon(ns, "dashboard")
	h.Spec.SecretStoreRef = &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: store.Name}
	for _, obj := range []client.Object{store, h} {
		if err := env.Client.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	play := world.New(env.Client, world.WithWorkloads(),
		world.WithSecret("horizon/secret-key", map[string][]byte{"secret_key": []byte("k")})).Hook(h)
	for _, c := range []string{controller.ConditionSecretsReady, controller.ConditionConfigReady, controller.ConditionDeploymentReady} {
		testenv.ExpectConditionWhile(t, env.Client, h, c, metav1.ConditionTrue, play)
	}
	testenv.ExpectCondition(t, env.Client, h, controller.ConditionHorizonAPIReady, metav1.ConditionFalse)
	api := meta.FindStatusCondition(h.Status.Conditions, controller.ConditionHorizonAPIReady)
	if !slices.Contains([]string{health.ReasonEndpointNotReady, health.ReasonConnectionFailed, health.ReasonTimeout}, api.Reason) {
		t.Errorf("HorizonAPIReady False for %s, want a reason of an unreachable endpoint:\n%s", api.Reason,
			testenv.DescribeConditions(h.Generation, h.Status.Conditions))
	}
	if h.Status.Endpoint != controller.Endpoint(h) {
		t.Fatalf("status.endpoint = %q, want %q", h.Status.Endpoint, controller.Endpoint(h))
	}
}

// servesTheWebhook: with --webhook-cert-path the command serves the admission webhook:
// a Horizon that declares a typed single sign-on setting again in extraConfig is
// refused, naming both fields, and one without a store reference gets the default store.
func servesTheWebhook(t *testing.T, ns string) {
	h := newHorizon(ns, "sso")
	h.Spec.WebSSO = &v1alpha1.WebSSOSpec{Enabled: true, Choices: []v1alpha1.WebSSOChoice{{ID: "oidc", Label: "SSO"}}}
	h.Spec.ExtraConfig = map[string]string{"WEBSSO_CHOICES": `(("x", "y"),)`}
	err := env.Client.Create(t.Context(), h.DeepCopy())
	if err == nil || !strings.Contains(err.Error(), "spec.extraConfig.WEBSSO_CHOICES") || !strings.Contains(err.Error(), "spec.websso.choices") {
		t.Fatalf("Horizon with WEBSSO_CHOICES in extraConfig: %v, want it refused naming spec.extraConfig.WEBSSO_CHOICES and spec.websso.choices", err)
	}
	h.Spec.ExtraConfig = nil
	if err := env.Client.Create(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	if h.Spec.SecretStoreRef == nil || h.Spec.SecretStoreRef.Name != world.DefaultClusterSecretStore {
		t.Fatalf("spec.secretStoreRef = %+v, want the default store", h.Spec.SecretStoreRef)
	}
}

// newHorizon returns a minimal Horizon named name in ns, its SECRET_KEY at the remote
// key horizon/secret-key.
func newHorizon(ns, name string) *v1alpha1.Horizon {
	return &v1alpha1.Horizon{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.HorizonSpec{
		Image:            "registry.example/horizon:2025.1",
		KeystoneEndpoint: "http://keystone.openstack.svc:5000/v3",
		SecretKey:        v1alpha1.SecretKeySpec{RemoteKey: "horizon/secret-key"},
	}}
}

// The health check's flags reach the reconciler's options: --health-check-base-url
// sets the URL its checks request below, --outbound-allow opens the policy they dial
// through; without them it requests the published endpoint through the safe policy.
func TestHealthCheckFlags(t *testing.T) {
	parse := func(args ...string) controller.Options {
		t.Helper()
		opts, ropts := defaultOptions(), controller.DefaultOptions()
		fs := flag.NewFlagSet("horizon-operator", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		bindFlags(&opts, &ropts, fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return ropts
	}
	if got := parse(); got.ProbeBase != "" || len(got.Outbound.AllowCIDRs) != 0 || len(got.Outbound.AllowHosts) != 0 || got.Outbound.AllowCrossHostRedirects {
		t.Errorf("without flags: base %q, policy %+v; want none and the default policy", got.ProbeBase, got.Outbound)
	}
	got := parse("--health-check-base-url", "http://127.0.0.1:8080", "--outbound-allow", "127.0.0.1", "--outbound-allow-cross-host-redirects")
	if got.ProbeBase != "http://127.0.0.1:8080" || !slices.Equal(got.Outbound.AllowCIDRs, []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}) ||
		!got.Outbound.AllowCrossHostRedirects {
		t.Errorf("with flags: base %q, policy %+v", got.ProbeBase, got.Outbound)
	}
}
