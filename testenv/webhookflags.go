package testenv

import "testing"

// WebhookFlags returns the values of an operator's --webhook-cert-path and
// --webhook-port (operator.Options.WebhookCertDir and WebhookPort) that serve its
// admission webhooks where the API server of e calls them ([Env.WebhookServerOptions]),
// for a test that runs the operator's own main function; [Env.WaitForWebhookServer]
// then waits until it listens. It fails t when e installed no webhooks
// ([Options.WebhookPaths]), or calls them at a host other than the local one, which
// those flags cannot name (the operator listens on every address).
func (e *Env) WebhookFlags(t testing.TB) (certDir string, port int) {
	t.Helper()
	wo, ok := e.WebhookServerOptions()
	if !ok {
		t.Fatal("testenv: webhook flags: the environment installed no webhooks (Options.WebhookPaths)")
	}
	if wo.Host != "" && wo.Host != "127.0.0.1" && wo.Host != "localhost" {
		t.Fatalf("testenv: webhook flags: the API server calls the webhooks at host %q, which --webhook-port cannot name", wo.Host)
	}
	return wo.CertDir, wo.Port
}
