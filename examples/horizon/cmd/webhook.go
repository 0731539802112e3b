package main

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	horizonwebhook "github.com/c5c3/reconciler-sdk/examples/horizon/webhook"
)

// newWebhookServer serves the admission webhook with tls.crt and tls.key of certDir
// (reloaded when they change) on port.
func newWebhookServer(certDir string, port int) webhook.Server {
	return webhook.NewServer(webhook.Options{CertDir: certDir, Port: port})
}

// setupWebhook registers the Horizon defaulting and validating webhooks on mgr: the
// ValidatingWebhookConfiguration and MutatingWebhookConfiguration of
// ../config/webhook/manifests.yaml point the API server at them.
func setupWebhook(mgr ctrl.Manager) error {
	return horizonwebhook.SetupWebhookWithManager(mgr)
}
