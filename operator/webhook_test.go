package operator_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	certutil "k8s.io/client-go/util/cert"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/c5c3/reconciler-sdk/operator"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// ManagerOptions builds the webhook server of --webhook-cert-path and --webhook-port,
// none without a certificate directory, and keeps a WebhookServer the caller set.
func TestManagerOptionsWebhookServer(t *testing.T) {
	callers := webhook.NewServer(webhook.Options{Port: 1234})
	cases := map[string]struct {
		reason    string
		change    func(*operator.Options)
		want      *webhook.Options // nil: no server
		keepsMine bool
	}{
		"CertDirAndPort": {reason: "The server serves the certificate directory on the port.",
			change: func(o *operator.Options) { o.WebhookCertDir, o.WebhookPort = "/certs", 10250 },
			want:   &webhook.Options{CertDir: "/certs", Port: 10250}},
		"DefaultPort": {reason: "DefaultOptions' port is DefaultWebhookPort.",
			change: func(o *operator.Options) { o.WebhookCertDir = "/certs" },
			want:   &webhook.Options{CertDir: "/certs", Port: operator.DefaultWebhookPort}},
		"ZeroPort": {reason: "Port 0 means DefaultWebhookPort.",
			change: func(o *operator.Options) { o.WebhookCertDir, o.WebhookPort = "/certs", 0 },
			want:   &webhook.Options{CertDir: "/certs", Port: operator.DefaultWebhookPort}},
		"NoCertDir": {reason: "Without a certificate directory no webhook server is built.",
			change: func(o *operator.Options) { o.WebhookPort = 10250 }},
		"CallersServer": {reason: "A WebhookServer the caller set is kept, whatever the flags.",
			change: func(o *operator.Options) {
				o.WebhookCertDir, o.Manager.WebhookServer = "/certs", callers
			},
			keepsMine: true},
		"CallersServerWithoutCertDir": {reason: "A caller's WebhookServer serves webhooks without a certificate directory.",
			change:    func(o *operator.Options) { o.Manager.WebhookServer = callers },
			keepsMine: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := operator.DefaultOptions()
			opts.FieldManager, opts.Manager.Scheme = "memo-operator", runtime.NewScheme()
			tc.change(&opts)
			got := opts.ManagerOptions().WebhookServer
			switch {
			case tc.keepsMine:
				if got != callers || !opts.ServesWebhooks() {
					t.Fatalf("\n%s\nWebhookServer = %#v, ServesWebhooks %v; want the caller's, serving", tc.reason, got, opts.ServesWebhooks())
				}
			case tc.want == nil:
				if got != nil || opts.ServesWebhooks() {
					t.Fatalf("\n%s\nWebhookServer = %#v, ServesWebhooks %v; want none", tc.reason, got, opts.ServesWebhooks())
				}
			default:
				s, ok := got.(*webhook.DefaultServer)
				if !ok {
					t.Fatalf("\n%s\nWebhookServer = %#v, want a *webhook.DefaultServer", tc.reason, got)
				}
				gotOpts := s.Options
				if len(gotOpts.TLSOpts) != 1 {
					t.Errorf("\n%s\nTLS options: %d, want HTTP/1.1 only", tc.reason, len(gotOpts.TLSOpts))
				}
				gotOpts.TLSOpts = nil
				if diff := cmp.Diff(*tc.want, gotOpts); diff != "" {
					t.Errorf("\n%s\nwebhook options: -want +got:\n%s", tc.reason, diff)
				}
				if !opts.ServesWebhooks() {
					t.Errorf("\n%s\nServesWebhooks() = false", tc.reason)
				}
			}
		})
	}
}

// Options.Scheme adds AddToScheme to the caller's scheme, or to NewScheme's when there
// is none, and names the function that failed.
func TestOptionsScheme(t *testing.T) {
	addWidget := func(s *runtime.Scheme) error {
		s.AddKnownTypeWithName(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, &corev1.ConfigMap{})
		return nil
	}
	boom := errors.New("boom")
	failing := func(*runtime.Scheme) error { return boom }
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

	opts := operator.Options{AddToScheme: []func(*runtime.Scheme) error{addWidget}}
	built, err := opts.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	if !built.Recognizes(widget) || !built.Recognizes(schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"}) {
		t.Error("without Manager.Scheme: want NewScheme's kinds and the operator's")
	}

	mine := runtime.NewScheme()
	opts.Manager.Scheme = mine
	if got, err := opts.Scheme(); err != nil || got != mine || !mine.Recognizes(widget) {
		t.Errorf("with Manager.Scheme: Scheme() = %p, %v; want the caller's scheme %p with the operator's kinds", got, err, mine)
	}

	opts.AddToScheme = append(opts.AddToScheme, failing)
	if _, err := opts.Scheme(); !errors.Is(err, boom) || !strings.Contains(err.Error(), "Options.AddToScheme[1]") {
		t.Errorf("failing AddToScheme: Scheme() error = %v, want boom naming Options.AddToScheme[1]", err)
	}
	opts.Manager.Scheme = nil
	if _, err := opts.Scheme(); !errors.Is(err, boom) || !strings.Contains(err.Error(), "add[1]") {
		t.Errorf("failing AddToScheme on NewScheme: Scheme() error = %v, want boom naming add[1]", err)
	}
}

// With --webhook-cert-path and --webhook-port Run serves the webhooks SetupWebhooks
// registers over HTTPS with that certificate, on that port; without a certificate
// directory SetupWebhooks is not called and nothing listens there.
func TestRunServesWebhooks(t *testing.T) {
	ns := env.Namespace(t)
	certDir := writeServingCert(t)
	port := testenv.FreePort(t)
	opts := testOptions(ns)
	opts.AddToScheme = []func(*runtime.Scheme) error{corev1.AddToScheme}
	opts.WebhookCertDir, opts.WebhookPort = certDir, port
	registered := make(chan struct{}, 1)
	opts.SetupWebhooks = func(mgr ctrl.Manager) error {
		mgr.GetWebhookServer().Register("/hello", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = fmt.Fprint(w, "hello")
		}))
		registered <- struct{}{}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- operator.Run(ctx, env.Config, opts, setupGreeter) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case <-registered:
	case err := <-done:
		t.Fatalf("Run returned %v before SetupWebhooks ran", err)
	}
	url := "https://127.0.0.1:" + strconv.Itoa(port) + "/hello"
	eventually(t, "the webhook server answers /hello", func(ctx context.Context) (bool, error) {
		code, body, err := httpGet(ctx, url, "")
		return code == http.StatusOK && body == "hello", err
	})
	conn, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}}) //nolint:gosec // the test's own certificate
	if err != nil {
		t.Fatal(err)
	}
	state := conn.ConnectionState()
	_ = conn.Close()
	if state.NegotiatedProtocol == "h2" || len(state.PeerCertificates) == 0 || !strings.HasPrefix(state.PeerCertificates[0].Subject.CommonName, "webhook.test") {
		t.Errorf("TLS: protocol %q, certificate %v; want HTTP/1.1 and the certificate of --webhook-cert-path",
			state.NegotiatedProtocol, state.PeerCertificates)
	}
}

// Without --webhook-cert-path Run serves no webhook: SetupWebhooks is not called, and
// the manager runs (its greeter reconciles).
func TestRunWithoutWebhookCertDir(t *testing.T) {
	ns := env.Namespace(t)
	opts := testOptions(ns)
	called := make(chan struct{}, 1)
	opts.SetupWebhooks = func(ctrl.Manager) error { called <- struct{}{}; return nil }
	testenv.Go(t, func(ctx context.Context) error { return operator.Run(ctx, env.Config, opts, setupGreeter) })
	if err := env.Client.Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the ConfigMap plain-greeting", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "plain-greeting"}, &corev1.ConfigMap{})
		return err == nil, client.IgnoreNotFound(err)
	})
	select {
	case <-called:
		t.Fatal("SetupWebhooks ran without --webhook-cert-path")
	default:
	}
}

// A SetupWebhooks error stops Run before the manager starts, wrapped and named.
func TestRunWebhookSetupFails(t *testing.T) {
	boom := errors.New("boom")
	opts := testOptions(env.Namespace(t))
	opts.WebhookCertDir, opts.WebhookPort = writeServingCert(t), testenv.FreePort(t)
	opts.SetupWebhooks = func(ctrl.Manager) error { return boom }
	err := operator.Run(context.Background(), env.Config, opts, setupGreeter)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "operator admission webhooks: boom") {
		t.Fatalf("Run = %v, want boom wrapped as operator admission webhooks", err)
	}
}

// writeServingCert writes a self-signed tls.crt and tls.key for 127.0.0.1 (common name
// webhook.test) into a new directory and returns it.
func writeServingCert(t *testing.T) string {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("webhook.test", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
