package main

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	keystonewebhook "github.com/c5c3/reconciler-sdk/examples/keystone/webhook"
)

// newWebhookServer serves the admission webhooks with tls.crt and tls.key of certDir
// (reloaded when they change) on port.
func newWebhookServer(certDir string, port int) webhook.Server {
	return webhook.NewServer(webhook.Options{CertDir: certDir, Port: port})
}

// setupWebhook registers the Keystone defaulting and validating webhooks and the
// KeystoneIdentityBackend validating webhook on mgr: the
// ValidatingWebhookConfiguration and MutatingWebhookConfiguration of
// ../config/webhook/manifests.yaml point the API server at them.
func setupWebhook(mgr ctrl.Manager) error {
	return keystonewebhook.SetupWebhookWithManager(mgr)
}
