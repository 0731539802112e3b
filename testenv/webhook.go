package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// WebhookServerOptions returns the options of a webhook server that the webhooks of
// [Options.WebhookPaths] reach: the local host, port and serving certificates envtest
// generated. ok is false when the environment installed no webhooks. [Env.StartManager]
// and [Env.RunManager] use it for a manager whose options set no WebhookServer.
func (e *Env) WebhookServerOptions() (opts webhook.Options, ok bool) {
	if e == nil || e.env == nil || len(e.env.WebhookInstallOptions.Paths) == 0 {
		return webhook.Options{}, false
	}
	w := e.env.WebhookInstallOptions
	return webhook.Options{Host: w.LocalServingHost, Port: w.LocalServingPort, CertDir: w.LocalServingCertDir}, true
}

// WaitForWebhookServer waits until something listens where the webhooks of
// [Options.WebhookPaths] are called (the address of [Env.WebhookServerOptions]): for a
// test that runs an operator's own main function, whose manager serves the webhooks,
// before it relies on them. It returns an error when the environment installed no
// webhooks, or when nothing listens within 30 seconds or before ctx ends.
func (e *Env) WaitForWebhookServer(ctx context.Context) error {
	wo, ok := e.WebhookServerOptions()
	if !ok {
		return errors.New("testenv: wait for the webhook server: the environment installed no webhooks (Options.WebhookPaths)")
	}
	host := wo.Host
	if host == "" {
		host = "127.0.0.1"
	}
	addr := net.JoinHostPort(host, strconv.Itoa(wo.Port))
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, webhookStartTimeout, true,
		func(ctx context.Context) (bool, error) {
			var conn net.Conn
			if conn, last = (&net.Dialer{}).DialContext(ctx, "tcp", addr); last == nil {
				_ = conn.Close()
			}
			return last == nil, nil
		})
	if err != nil {
		return fmt.Errorf("testenv: nothing listens at the webhook address %s: %w (last dial: %w)", addr, err, last)
	}
	return nil
}

// webhookStartTimeout bounds the wait for a manager's webhook server to listen.
const webhookStartTimeout = 30 * time.Second

// waitForWebhookServer waits until mgr's webhook server accepts TLS connections.
func waitForWebhookServer(ctx context.Context, mgr manager.Manager) error {
	started := mgr.GetWebhookServer().StartedChecker()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	if err != nil {
		return err
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, webhookStartTimeout, true,
		func(context.Context) (bool, error) {
			last = started(req)
			return last == nil, nil
		})
	if err != nil {
		return fmt.Errorf("testenv: webhook server did not start: %w (last check: %w)", err, last)
	}
	return nil
}
