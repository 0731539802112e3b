package testenv_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// TestWebhooksAreServedByTheTestManager installs a validating webhook from a manifest,
// registers its handler on a manager from StartManager, and shows the real API server
// calling it: a labelled ConfigMap with a forbidden key is refused with the handler's
// message, an allowed one and an unlabelled one are admitted.
func TestWebhooksAreServedByTheTestManager(t *testing.T) {
	e, err := testenv.Start(testenv.Options{CRDSources: []testenv.CRDSource{},
		WebhookPaths: []string{"testdata/webhooks"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	if _, ok := e.WebhookServerOptions(); !ok {
		t.Fatal("WebhookServerOptions reports no webhooks")
	}
	soon, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := e.WaitForWebhookServer(soon); err == nil {
		t.Fatal("WaitForWebhookServer returned before any server listened")
	}
	mgr, _ := e.StartManager(t, ctrl.Options{})
	if err := e.WaitForWebhookServer(context.Background()); err != nil {
		t.Fatalf("WaitForWebhookServer with the manager serving: %v", err)
	}
	mgr.GetWebhookServer().Register("/validate-configmap", &webhook.Admission{Handler: admission.HandlerFunc(
		func(_ context.Context, req admission.Request) admission.Response {
			if strings.Contains(string(req.Object.Raw), `"forbidden"`) {
				return admission.Denied("data.forbidden is not allowed")
			}
			return admission.Allowed("")
		})})

	ns := e.Namespace(t)
	cm := func(name, key string, labelled bool) *corev1.ConfigMap {
		c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{key: "x"}}
		if labelled {
			c.Labels = map[string]string{"testenv.c5c3.io/webhook": "on"}
		}
		return c
	}
	ctx := context.Background()
	err = e.Client.Create(ctx, cm("refused", "forbidden", true))
	if err == nil || !strings.Contains(err.Error(), "data.forbidden is not allowed") {
		t.Fatalf("labelled ConfigMap with a forbidden key: err = %v, want the webhook's denial", err)
	}
	if err := e.Client.Create(ctx, cm("allowed", "fine", true)); err != nil {
		t.Fatalf("labelled ConfigMap the webhook allows: %v", err)
	}
	if err := e.Client.Create(ctx, cm("unlabelled", "forbidden", false)); err != nil {
		t.Fatalf("ConfigMap outside the webhook's selector: %v", err)
	}
}

func TestWebhookServerOptionsWithoutWebhooks(t *testing.T) {
	if _, ok := env.WebhookServerOptions(); ok {
		t.Fatal("an environment without WebhookPaths reports webhook server options")
	}
	var none *testenv.Env
	if _, ok := none.WebhookServerOptions(); ok {
		t.Fatal("a nil Env reports webhook server options")
	}
	if err := env.WaitForWebhookServer(context.Background()); err == nil || !strings.Contains(err.Error(), "no webhooks") {
		t.Fatalf("WaitForWebhookServer without webhooks: %v, want an error saying none are installed", err)
	}
}
