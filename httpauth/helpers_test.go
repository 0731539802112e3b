package httpauth_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// token is env.ServiceAccountToken: ns/name bound to rules (none: no binding).
func token(t *testing.T, ns, name string, rules ...rbacv1.PolicyRule) string {
	t.Helper()
	return env.ServiceAccountToken(t, ns, name, rules...)
}

// send sends method to url with the bearer token (none when empty) and returns the
// status code and body; TLS certificates are not verified.
func send(t *testing.T, method, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed test server
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
