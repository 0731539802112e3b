package keystoneapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keystoneapi"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystoneapi/keystonetest"
	"github.com/c5c3/reconciler-sdk/outbound"
)

const password = "s3cr3t-$pass&word"

func admin(pw string) keystoneapi.Credentials {
	return keystoneapi.Credentials{Username: "admin", Password: pw, ProjectName: keystonetest.AdminProject}
}

// loopback are the options of a client of an httptest server: the outbound policy
// refuses loopback unless it is allowed.
var loopback = keystoneapi.Options{Policy: outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}}

func newClient(t *testing.T, endpoint, pw string) *keystoneapi.Client {
	t.Helper()
	c, err := keystoneapi.New(endpoint, admin(pw), loopback)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func standIn(t *testing.T) *keystonetest.Server {
	t.Helper()
	s := keystonetest.New("admin", password)
	t.Cleanup(s.Close)
	return s
}

// noSecret fails when err's text carries the password or a token the stand-in issued.
func noSecret(t *testing.T, err error, secrets ...string) {
	t.Helper()
	for _, s := range append(secrets, password) {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Fatalf("error %q carries a secret", err)
		}
	}
}

func TestCreateThenGetDomain(t *testing.T) {
	s := standIn(t)
	c := newClient(t, s.URL+"/v3/", password)
	ctx := context.Background()
	if _, err := c.GetDomainByName(ctx, "corp"); !errors.Is(err, keystoneapi.ErrNotFound) {
		t.Fatalf("GetDomainByName before create: %v, want ErrNotFound", err)
	}
	created, err := c.CreateDomain(ctx, keystoneapi.Domain{ID: "ignored", Name: "corp", Description: "Corp", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	stored, ok := s.Domain("corp")
	if !ok || created.ID != stored.ID || created.ID == "ignored" || stored.Description != "Corp" || !stored.Enabled {
		t.Fatalf("created %+v, stored %+v", created, stored)
	}
	got, err := c.GetDomainByName(ctx, "corp")
	if err != nil || *got != *created {
		t.Fatalf("GetDomainByName = %+v, %v; want %+v", got, err, created)
	}
	if n := s.Calls("POST /v3/auth/tokens"); n != 1 {
		t.Fatalf("authenticated %d times, want once: the token is kept", n)
	}
	_, err = c.CreateDomain(ctx, keystoneapi.Domain{Name: "corp", Enabled: true})
	if !errors.Is(err, keystoneapi.ErrConflict) || !strings.Contains(err.Error(), "POST /v3/domains") {
		t.Fatalf("second create: %v, want ErrConflict naming the call", err)
	}
}

func TestWrongPasswordIsUnauthorizedAndNotQuoted(t *testing.T) {
	s := standIn(t)
	c := newClient(t, s.URL, "wrong-password")
	err := c.Authenticate(context.Background())
	if !errors.Is(err, keystoneapi.ErrUnauthorized) {
		t.Fatalf("Authenticate: %v, want ErrUnauthorized", err)
	}
	noSecret(t, err, "wrong-password")
	if _, err := c.GetDomainByName(context.Background(), "corp"); !errors.Is(err, keystoneapi.ErrUnauthorized) {
		t.Fatalf("GetDomainByName: %v, want ErrUnauthorized", err)
	}
}

func TestRevokedTokenReauthenticatesOnce(t *testing.T) {
	s := standIn(t)
	c := newClient(t, s.URL, password)
	ctx := context.Background()
	if err := c.Authenticate(ctx); err != nil {
		t.Fatal(err)
	}
	s.SetAdminPassword(password) // revokes the kept token
	if _, err := c.CreateDomain(ctx, keystoneapi.Domain{Name: "corp", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if n := s.Calls("POST /v3/auth/tokens"); n != 2 {
		t.Fatalf("authenticated %d times, want 2", n)
	}
	s.SetAdminPassword("rotated")
	_, err := c.GetDomainByName(ctx, "corp")
	if !errors.Is(err, keystoneapi.ErrUnauthorized) {
		t.Fatalf("after the password changed: %v, want ErrUnauthorized", err)
	}
	if n := s.Calls("GET /v3/domains"); n != 1 {
		t.Fatalf("GET /v3/domains called %d times, want 1 (a refused re-authentication ends the call)", n)
	}
}

func TestStatusesMapToSentinels(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   error
	}{
		{http.StatusForbidden, keystoneapi.ErrForbidden},
		{http.StatusBadRequest, keystoneapi.ErrInvalidRequest},
		{http.StatusRequestEntityTooLarge, keystoneapi.ErrInvalidRequest},
		{http.StatusInternalServerError, keystoneapi.ErrUnavailable},
		{http.StatusConflict, keystoneapi.ErrConflict},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			s := standIn(t)
			s.SetCreateStatus(tc.status)
			_, err := newClient(t, s.URL, password).CreateDomain(context.Background(), keystoneapi.Domain{Name: "corp"})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), fmt.Sprintf("answer %d: the stand-in refuses", tc.status)) {
				t.Fatalf("CreateDomain: %v, want %v with status and Keystone's message", err, tc.want)
			}
			if _, ok := s.Domain("corp"); ok {
				t.Fatal("the refused domain was created")
			}
		})
	}
}

func TestUnavailable(t *testing.T) {
	s := standIn(t)
	s.SetUnavailable(true)
	c := newClient(t, s.URL, password)
	if err := c.Authenticate(context.Background()); !errors.Is(err, keystoneapi.ErrUnavailable) {
		t.Fatalf("503: %v, want ErrUnavailable", err)
	}
	s.SetUnavailable(false)
	if err := c.Authenticate(context.Background()); err != nil {
		t.Fatalf("after recovery: %v", err)
	}
	s.Close()
	_, err := c.GetDomainByName(context.Background(), "corp")
	if !errors.Is(err, keystoneapi.ErrUnavailable) || !strings.Contains(err.Error(), "GET /v3/domains") {
		t.Fatalf("closed server: %v, want ErrUnavailable naming the call", err)
	}
	if strings.Contains(err.Error(), "name=") || strings.Contains(err.Error(), s.URL) {
		t.Fatalf("closed server: %q quotes the request's URL or query", err)
	}
	noSecret(t, err)
}

// echo is a server that puts the request's password and token into its error texts and
// headers, as a broken proxy might: the client must redact both.
func TestErrorsNeverCarryPasswordOrToken(t *testing.T) {
	const token = "tok-1234567890"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v3/auth/tokens" {
			w.Header().Set("X-Subject-Token", token)
			w.WriteHeader(http.StatusCreated)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = fmt.Fprintf(w, `{"error":{"message":"token %s for password %s refused"}}`, r.Header.Get("X-Auth-Token"), password)
	}))
	t.Cleanup(srv.Close)
	_, err := newClient(t, srv.URL, password).GetDomainByName(context.Background(), "corp")
	if !errors.Is(err, keystoneapi.ErrUnavailable) || !strings.Contains(err.Error(), "token [redacted] for password [redacted] refused") {
		t.Fatalf("GetDomainByName: %v, want ErrUnavailable with both secrets redacted", err)
	}
	noSecret(t, err, token)
}

func TestUnexpectedResponses(t *testing.T) {
	for name, handler := range map[string]http.HandlerFunc{
		"no token header": func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusCreated) },
		"body not JSON": func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v3/auth/tokens" {
				w.Header().Set("X-Subject-Token", "t")
				w.WriteHeader(http.StatusCreated)
				return
			}
			_, _ = fmt.Fprint(w, "<html>")
		},
		"redirect": func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotModified) },
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(handler)
			t.Cleanup(srv.Close)
			_, err := newClient(t, srv.URL, password).GetDomainByName(context.Background(), "corp")
			if !errors.Is(err, keystoneapi.ErrUnexpectedResponse) {
				t.Fatalf("GetDomainByName: %v, want ErrUnexpectedResponse", err)
			}
		})
	}
}

func TestNewRefusesOptions(t *testing.T) {
	for _, tc := range []struct {
		name, endpoint string
		creds          keystoneapi.Credentials
		want           string
	}{
		{"not http", "ftp://keystone", admin(password), "not an http or https URL"},
		{"no host", "http://", admin(password), "has no host"},
		{"user information", "http://operator:" + password + "@keystone", admin(password), "carries user information"},
		{"query", "http://keystone?token=query-secret", admin(password), "query or fragment"},
		{"fragment", "http://keystone#fragment-secret", admin(password), "query or fragment"},
		{"not a URL", "http://key stone:port", admin(password), "not a URL"},
		{"no credentials", "http://keystone", keystoneapi.Credentials{}, "Username, Password, ProjectName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := keystoneapi.New(tc.endpoint, tc.creds, keystoneapi.Options{})
			if !errors.Is(err, keystoneapi.ErrInvalidOptions) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want ErrInvalidOptions containing %q", err, tc.want)
			}
			noSecret(t, err, "operator", "query-secret", "fragment-secret")
		})
	}
}

// trap is a server that records every request it gets: the destination a redirect
// points at.
type trap struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string // "<method> <path> token=<X-Auth-Token> body=<body>"
}

// got returns the requests the trap recorded.
func (tr *trap) got() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.requests...)
}

func newTrap(t *testing.T) *trap {
	t.Helper()
	tr := &trap{}
	tr.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		tr.mu.Lock()
		defer tr.mu.Unlock()
		tr.requests = append(tr.requests, fmt.Sprintf("%s %s token=%s body=%s", r.Method, r.URL.Path, r.Header.Get("X-Auth-Token"), body))
		w.Header().Set("X-Subject-Token", "trapped")
		w.WriteHeader(http.StatusCreated)
		_, _ = fmt.Fprint(w, `{"domains":[],"domain":{"id":"x","name":"corp"}}`)
	}))
	t.Cleanup(tr.Close)
	return tr
}

// A Keystone, or whatever answers at its endpoint, that redirects a call gets the
// redirect refused: neither the password of the authentication nor the token of a
// later call reaches the host it points at, whatever the status (307 and 308 keep
// the method and the body).
func TestRedirectsAreNotFollowed(t *testing.T) {
	const token = "tok-redirected"
	for _, tc := range []struct {
		name   string
		status int
		path   string // the call that is redirected
	}{
		{"authentication 307", http.StatusTemporaryRedirect, "/v3/auth/tokens"},
		{"authentication 308", http.StatusPermanentRedirect, "/v3/auth/tokens"},
		{"domain lookup 302", http.StatusFound, "/v3/domains"},
		{"same host 307", http.StatusTemporaryRedirect, "/v3/auth/tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTrap(t)
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == tc.path {
					to := tr.URL
					if strings.HasPrefix(tc.name, "same host") {
						to = srv.URL
					}
					http.Redirect(w, r, to+"/elsewhere"+r.URL.Path, tc.status)
					return
				}
				w.Header().Set("X-Subject-Token", token)
				w.WriteHeader(http.StatusCreated)
			}))
			t.Cleanup(srv.Close)
			_, err := newClient(t, srv.URL, password).GetDomainByName(context.Background(), "corp")
			var re *outbound.RedirectError
			if !errors.Is(err, keystoneapi.ErrUnexpectedResponse) || !errors.Is(err, outbound.ErrRedirectRefused) || !errors.As(err, &re) {
				t.Fatalf("GetDomainByName: %v, want ErrUnexpectedResponse wrapping an *outbound.RedirectError", err)
			}
			if got := tr.got(); len(got) != 0 {
				t.Fatalf("the redirect was followed: the trap got %q", got)
			}
			if strings.Contains(err.Error(), "/elsewhere") {
				t.Fatalf("error %q quotes the redirect's path", err)
			}
			noSecret(t, err, token)
		})
	}
}

// The default outbound policy refuses a Keystone endpoint on loopback (the operator's
// own pod) before any byte is sent; tests allow it explicitly.
func TestDefaultPolicyRefusesLoopback(t *testing.T) {
	s := standIn(t)
	for _, endpoint := range []string{s.URL, strings.Replace(s.URL, "127.0.0.1", "localhost", 1)} {
		c, err := keystoneapi.New(endpoint, admin(password), keystoneapi.Options{})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Authenticate(context.Background())
		var refused *outbound.RefusedError
		if !errors.Is(err, keystoneapi.ErrUnavailable) || !errors.Is(err, outbound.ErrRefused) || !errors.As(err, &refused) ||
			refused.Range != "loopback" {
			t.Fatalf("%s: Authenticate %v, want ErrUnavailable wrapping an *outbound.RefusedError for loopback", endpoint, err)
		}
		noSecret(t, err)
	}
	if n := s.Calls("POST /v3/auth/tokens"); n != 0 {
		t.Fatalf("the stand-in got %d authentications; the password left the operator", n)
	}
	if err := newClient(t, s.URL, password).Authenticate(context.Background()); err != nil {
		t.Fatalf("with loopback allowed: %v", err)
	}
}

// Options.Transport supplies the TLS settings (here the CA of the stand-in's
// certificate); the client still dials through the policy.
func TestTransportKeepsTLSSettings(t *testing.T) {
	s := keystonetest.NewTLS("admin", password)
	t.Cleanup(s.Close)
	base := s.Client().Transport.(*http.Transport)
	c, err := keystoneapi.New(s.URL, admin(password), keystoneapi.Options{Policy: loopback.Policy, Transport: base})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Authenticate(context.Background()); err != nil {
		t.Fatalf("with the stand-in's CA: %v", err)
	}
	c, _ = keystoneapi.New(s.URL, admin(password), loopback)
	if err := c.Authenticate(context.Background()); !errors.Is(err, keystoneapi.ErrUnavailable) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without it: %v, want ErrUnavailable for the unknown certificate", err)
	}
	c, _ = keystoneapi.New(s.URL, admin(password), keystoneapi.Options{Transport: base})
	if err := c.Authenticate(context.Background()); !errors.Is(err, outbound.ErrRefused) {
		t.Fatalf("a Transport does not open the policy: %v, want ErrRefused", err)
	}
}
