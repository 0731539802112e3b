package multicluster_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// RunOperator inherits the admission webhook server of operator.Options: with
// --webhook-cert-path and --webhook-port it serves what SetupWebhooks registered on the
// local manager over HTTPS with that certificate, and the scheme is built from
// AddToScheme when Manager.Scheme is nil.
func TestRunOperatorServesWebhooks(t *testing.T) {
	opts := operatorOpts(env.Namespace(t))
	opts.Manager.Scheme, opts.AddToScheme = nil, []func(*runtime.Scheme) error{corev1.AddToScheme}
	port := testenv.FreePort(t)
	opts.WebhookCertDir, opts.WebhookPort = testenv.ServingCertDir(t), port
	opts.SetupWebhooks = func(mgr ctrl.Manager) error {
		mgr.GetWebhookServer().Register("/hello", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = fmt.Fprint(w, "hello")
		}))
		return nil
	}
	schemeBuilt := make(chan bool, 1)
	testenv.Go(t, func(ctx context.Context) error {
		return multicluster.RunOperator(ctx, env.Config, opts, func(_ context.Context, mgr mcmanager.Manager, _ *multicluster.ClusterResolver) error {
			schemeBuilt <- mgr.GetLocalManager().GetScheme().Recognizes(corev1.SchemeGroupVersion.WithKind("ServiceAccount"))
			return nil
		})
	})
	select {
	case ok := <-schemeBuilt:
		if !ok {
			t.Error("the manager's scheme lacks the kinds of AddToScheme")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the setup did not run within 60s")
	}
	eventually(t, 30*time.Second, "the webhook server answers /hello", func(ctx context.Context) (bool, error) {
		code, body, err := httpGet(ctx, "https://127.0.0.1:"+strconv.Itoa(port)+"/hello")
		return code == http.StatusOK && body == "hello", err
	})
}

// An error of SetupWebhooks stops RunOperator before the manager starts, wrapped.
func TestRunOperatorReturnsTheWebhookSetupError(t *testing.T) {
	opts := operatorOpts(env.Namespace(t))
	opts.WebhookCertDir, opts.WebhookPort = testenv.ServingCertDir(t), testenv.FreePort(t)
	boom := errors.New("boom")
	opts.SetupWebhooks = func(ctrl.Manager) error { return boom }
	err := multicluster.RunOperator(context.Background(), env.Config, opts,
		func(context.Context, mcmanager.Manager, *multicluster.ClusterResolver) error { return nil })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "operator admission webhooks") {
		t.Fatalf("RunOperator = %v, want the webhook setup's error wrapped as operator admission webhooks", err)
	}
}
