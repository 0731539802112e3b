package testenv_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/c5c3/reconciler-sdk/operator"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// An operator run by operator.Run with the values of WebhookFlags as --webhook-cert-path
// and --webhook-port serves the webhooks the API server calls: a labelled ConfigMap
// with a forbidden key is refused with the handler's message.
func TestWebhookFlagsServeWhereTheAPIServerCalls(t *testing.T) {
	e, err := testenv.Start(testenv.Options{CRDSources: []testenv.CRDSource{}, WebhookPaths: []string{"testdata/webhooks"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	ns := e.Namespace(t)
	opts := operator.DefaultOptions()
	opts.FieldManager, opts.Namespace, opts.LeaderElect = "webhook-operator", ns, false
	opts.MetricsBindAddress, opts.HealthProbeBindAddress = "0", "0"
	opts.Manager.Scheme = e.Scheme
	opts.WebhookCertDir, opts.WebhookPort = e.WebhookFlags(t)
	opts.SetupWebhooks = func(mgr ctrl.Manager) error {
		mgr.GetWebhookServer().Register("/validate-configmap", &webhook.Admission{Handler: admission.HandlerFunc(
			func(_ context.Context, req admission.Request) admission.Response {
				if strings.Contains(string(req.Object.Raw), `"forbidden"`) {
					return admission.Denied("data.forbidden is not allowed")
				}
				return admission.Allowed("")
			})})
		return nil
	}
	testenv.Go(t, func(ctx context.Context) error {
		return operator.Run(ctx, e.Config, opts, func(context.Context, operator.Operator) error { return nil })
	})
	if err := e.WaitForWebhookServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "refused", Namespace: ns,
		Labels: map[string]string{"testenv.c5c3.io/webhook": "on"}}, Data: map[string]string{"forbidden": "x"}}
	if err := e.Client.Create(t.Context(), cm); err == nil || !strings.Contains(err.Error(), "data.forbidden is not allowed") {
		t.Fatalf("create a ConfigMap the webhook refuses: %v, want the webhook's refusal", err)
	}
}

// Without webhooks installed, WebhookFlags fails the test naming Options.WebhookPaths.
func TestWebhookFlagsWithoutWebhooks(t *testing.T) {
	r := runTB(t, func(tb testing.TB) { env.WebhookFlags(tb) })
	if r.finished || !strings.Contains(r.fatal, "Options.WebhookPaths") {
		t.Fatalf("WebhookFlags without webhooks: finished %v, fatal %q; want a failure naming Options.WebhookPaths", r.finished, r.fatal)
	}
}
