package httpauth_test

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"

	"github.com/c5c3/reconciler-sdk/httpauth"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// reviewer is the ClusterRole of a server that reviews tokens and access.
var reviewer = &rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{
	{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
	{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
}}

// ok answers 200 "secret".
var ok = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("secret")) })

// A server behind the guard, running as a user who may only review tokens and access,
// answers only a request whose bearer token the API server authenticates and whose
// user RBAC allows the verb on the path; every other request is refused before the
// handler runs, and an allowed user's answers are reused, not reviewed again.
func TestGuardAuthenticatesAndAuthorizes(t *testing.T) {
	ns := env.Namespace(t)
	reader := token(t, ns, "reader", rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics", "/pages/*"}, Verbs: []string{"get"}})
	stranger := token(t, ns, "stranger")
	cfg := rest.CopyConfig(env.ConfigAs(t, "guard", reviewer))
	counter := &testenv.RequestCounter{}
	cfg.Wrap(counter.Wrap)
	g, err := httpauth.New(cfg, nil, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler(ok))
	defer srv.Close()

	for _, tc := range []struct {
		name, method, path, token string
		code                      int
		body                      string
	}{
		{"no token", http.MethodGet, "/metrics", "", http.StatusUnauthorized, "unauthorized"},
		{"a token the API server does not know", http.MethodGet, "/metrics", "not-a-token", http.StatusUnauthorized, "unauthorized"},
		{"a user without a rule", http.MethodGet, "/metrics", stranger, http.StatusForbidden,
			`user "system:serviceaccount:` + ns + `:stranger" may not get /metrics`},
		{"a path the rule does not name", http.MethodGet, "/debug", reader, http.StatusForbidden, "may not get /debug"},
		{"a verb the rule does not name", http.MethodPost, "/metrics", reader, http.StatusForbidden, "may not post /metrics"},
		{"allowed", http.MethodGet, "/metrics", reader, http.StatusOK, "secret"},
		{"allowed by a wildcard", http.MethodGet, "/pages/a/b", reader, http.StatusOK, "secret"},
		{"HEAD is get", http.MethodHead, "/metrics", reader, http.StatusOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := send(t, tc.method, srv.URL+tc.path, tc.token)
			if code != tc.code || !strings.Contains(body, tc.body) {
				t.Errorf("%s %s: %d %q, want %d with %q", tc.method, tc.path, code, body, tc.code, tc.body)
			}
			if code == http.StatusUnauthorized {
				if resp, err := http.Get(srv.URL + tc.path); err == nil {
					_ = resp.Body.Close()
					if resp.Header.Get("WWW-Authenticate") == "" {
						t.Error("401 without WWW-Authenticate")
					}
				}
			}
		})
	}

	counter.Reset()
	if code, _ := send(t, http.MethodGet, srv.URL+"/metrics", reader); code != http.StatusOK {
		t.Fatalf("GET /metrics again: %d", code)
	}
	if n := counter.Total(); n != 0 {
		t.Errorf("a second allowed GET sent %d reviews, want 0 (the answers are reused)", n)
	}
}

// A guard whose own user may not create TokenReviews answers 500 without the cause,
// and never runs the handler.
func TestGuardFailsClosedWhenItCannotReview(t *testing.T) {
	ns := env.Namespace(t)
	reader := token(t, ns, "reader", rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}})
	g, err := httpauth.New(env.ConfigAs(t, "powerless"), nil, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler(ok))
	defer srv.Close()
	code, body := send(t, http.MethodGet, srv.URL+"/metrics", reader)
	if code != http.StatusInternalServerError || strings.Contains(body, "secret") || strings.Contains(body, "forbidden") {
		t.Errorf("GET /metrics with a guard that cannot review: %d %q, want 500 without the cause", code, body)
	}
	if _, err := httpauth.New(nil, nil, logr.Discard()); !errors.Is(err, httpauth.ErrInvalidOptions) {
		t.Errorf("New(nil) = %v, want ErrInvalidOptions", err)
	}
}

// FilterProvider guards what controller-runtime's metrics server wraps with it.
func TestFilterProvider(t *testing.T) {
	ns := env.Namespace(t)
	reader := token(t, ns, "scraper", rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}})
	filter, err := httpauth.FilterProvider(env.Config, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := filter(logr.Discard(), ok)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	if code, _ := send(t, http.MethodGet, srv.URL+"/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics without a token: %d, want 401", code)
	}
	if code, body := send(t, http.MethodGet, srv.URL+"/metrics", reader); code != http.StatusOK || body != "secret" {
		t.Errorf("GET /metrics as the scraper: %d %q, want 200", code, body)
	}
}

// TLSConfig serves a self-signed certificate without a directory, the directory's
// certificate with one, and refuses a directory without the files.
func TestTLSConfig(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("inspector.test", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, httpauth.CertName), certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, httpauth.KeyName), keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, host string }{{"", "localhost"}, {dir, "inspector.test"}} {
		cfg, watch, err := httpauth.TLSConfig(tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = watch(t.Context()) }()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: ok, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(tls.NewListener(ln, cfg)) }()
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // reads the served certificate
		resp, err := c.Get("https://" + ln.Addr().String())
		_ = srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.TLS == nil || len(resp.TLS.PeerCertificates) == 0 || resp.TLS.PeerCertificates[0].Subject.CommonName == "" ||
			!strings.HasPrefix(resp.TLS.PeerCertificates[0].Subject.CommonName, tc.host) {
			t.Errorf("TLSConfig(%q) served %+v, want a certificate for %s", tc.dir, resp.TLS, tc.host)
		}
		if resp.TLS.NegotiatedProtocol == "h2" {
			t.Errorf("TLSConfig(%q) negotiated HTTP/2", tc.dir)
		}
	}
	if _, _, err := httpauth.TLSConfig(t.TempDir()); err == nil || !strings.Contains(err.Error(), httpauth.CertName) {
		t.Errorf("TLSConfig of an empty directory = %v, want an error naming %s", err, httpauth.CertName)
	}
}
