package keystoneapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keystoneapi"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystoneapi/keystonetest"
	"github.com/c5c3/reconciler-sdk/outbound"
)

const rules = `[{"local":[{"user":{"name":"{0}"}}],"remote":[{"type":"OIDC-email"}]}]`

// The three objects are created, read back, updated and deleted; the stand-in's table
// holds what the client sent.
func TestFederationObjectsLifecycle(t *testing.T) {
	s := standIn(t)
	c := newClient(t, s.URL, password)
	ctx := context.Background()
	d, err := c.CreateDomain(ctx, keystoneapi.Domain{Name: "corp", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}

	idp, err := c.CreateIdentityProvider(ctx, keystoneapi.IdentityProvider{ID: "okta", DomainID: d.ID,
		Description: "Okta", RemoteIDs: []string{"https://okta.example"}, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	stored, ok := s.IdentityProvider("okta")
	if !ok || stored.DomainID != d.ID || idp.DomainID != d.ID || !slices.Equal(stored.RemoteIDs, []string{"https://okta.example"}) || !stored.Enabled || stored.Description != "Okta" {
		t.Fatalf("created %+v, stored %+v", idp, stored)
	}
	if _, err := c.CreateMapping(ctx, keystoneapi.Mapping{ID: "okta-mapping", Rules: json.RawMessage(rules)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateProtocol(ctx, "okta", keystoneapi.Protocol{ID: "openid", MappingID: "okta-mapping"}); err != nil {
		t.Fatal(err)
	}

	got, err := c.GetIdentityProvider(ctx, "okta")
	if err != nil || got.ID != "okta" || got.DomainID != d.ID || !got.Enabled {
		t.Fatalf("GetIdentityProvider = %+v, %v", got, err)
	}
	m, err := c.GetMapping(ctx, "okta-mapping")
	if err != nil || !sameJSON(t, m.Rules, rules) {
		t.Fatalf("GetMapping = %s, %v", m.Rules, err)
	}
	p, err := c.GetProtocol(ctx, "okta", "openid")
	if err != nil || p.ID != "openid" || p.MappingID != "okta-mapping" {
		t.Fatalf("GetProtocol = %+v, %v", p, err)
	}

	// PATCH changes what it sends and leaves the domain: Keystone does not move a
	// provider, and the client does not try.
	upd, err := c.UpdateIdentityProvider(ctx, keystoneapi.IdentityProvider{ID: "okta", DomainID: "elsewhere",
		Description: "Okta SSO", RemoteIDs: []string{"https://okta.example/2"}, Enabled: false})
	if err != nil {
		t.Fatal(err)
	}
	if stored, _ := s.IdentityProvider("okta"); upd.DomainID != d.ID || stored.DomainID != d.ID || stored.Enabled ||
		!slices.Equal(stored.RemoteIDs, []string{"https://okta.example/2"}) || stored.Description != "Okta SSO" {
		t.Fatalf("updated %+v, stored %+v", upd, stored)
	}
	const rules2 = `[{"local":[{"group":{"id":"g1"}}],"remote":[{"type":"OIDC-groups","any_one_of":["admins"]}]}]`
	if _, err := c.UpdateMapping(ctx, keystoneapi.Mapping{ID: "okta-mapping", Rules: json.RawMessage(rules2)}); err != nil {
		t.Fatal(err)
	}
	if stored, _ := s.Mapping("okta-mapping"); !sameJSON(t, stored.Rules, rules2) {
		t.Fatalf("mapping rules stored %s", stored.Rules)
	}
	if _, err := c.CreateMapping(ctx, keystoneapi.Mapping{ID: "other", Rules: json.RawMessage(rules)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateProtocol(ctx, "okta", keystoneapi.Protocol{ID: "openid", MappingID: "other"}); err != nil {
		t.Fatal(err)
	}
	if stored, _ := s.Protocol("okta", "openid"); stored.MappingID != "other" {
		t.Fatalf("protocol stored %+v", stored)
	}

	if err := c.DeleteProtocol(ctx, "okta", "openid"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetProtocol(ctx, "okta", "openid"); !errors.Is(err, keystoneapi.ErrNotFound) {
		t.Fatalf("GetProtocol after delete: %v, want ErrNotFound", err)
	}
	if err := c.DeleteMapping(ctx, "okta-mapping"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Mapping("okta-mapping"); ok {
		t.Fatal("the mapping survived its delete")
	}
	if err := c.DeleteIdentityProvider(ctx, "okta"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetIdentityProvider(ctx, "okta"); !errors.Is(err, keystoneapi.ErrNotFound) || !strings.Contains(err.Error(), "Could not find Identity Provider: okta") {
		t.Fatalf("GetIdentityProvider after delete: %v, want ErrNotFound with Keystone's message", err)
	}
	for _, err := range []error{c.DeleteIdentityProvider(ctx, "okta"), c.DeleteMapping(ctx, "okta-mapping")} {
		if !errors.Is(err, keystoneapi.ErrNotFound) {
			t.Fatalf("second delete: %v, want ErrNotFound", err)
		}
	}
	if n := s.Calls("POST /v3/auth/tokens"); n != 1 {
		t.Fatalf("authenticated %d times, want once", n)
	}
}

// What Keystone refuses, the stand-in refuses, and the client's error says so with
// the status and Keystone's message.
func TestFederationRefusals(t *testing.T) {
	s := standIn(t)
	c := newClient(t, s.URL, password)
	ctx := context.Background()
	d, err := c.CreateDomain(ctx, keystoneapi.Domain{Name: "corp", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateIdentityProvider(ctx, keystoneapi.IdentityProvider{ID: "a", DomainID: d.ID, RemoteIDs: []string{"https://idp"}, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call func() error
		want error
		msg  string
	}{
		{"provider twice", func() error {
			_, err := c.CreateIdentityProvider(ctx, keystoneapi.IdentityProvider{ID: "a", DomainID: d.ID, Enabled: true})
			return err
		}, keystoneapi.ErrConflict, "answer 409: Conflict occurred"},
		{"remote id of another provider", func() error {
			_, err := c.CreateIdentityProvider(ctx, keystoneapi.IdentityProvider{ID: "b", DomainID: d.ID, RemoteIDs: []string{"https://idp"}, Enabled: true})
			return err
		}, keystoneapi.ErrConflict, "answer 409: Duplicate remote ID: https://idp"},
		{"provider in a missing domain", func() error {
			_, err := c.CreateIdentityProvider(ctx, keystoneapi.IdentityProvider{ID: "c", DomainID: "nope", Enabled: true})
			return err
		}, keystoneapi.ErrNotFound, "Could not find domain: nope"},
		{"update of a missing provider", func() error {
			_, err := c.UpdateIdentityProvider(ctx, keystoneapi.IdentityProvider{ID: "zz", Enabled: true})
			return err
		}, keystoneapi.ErrNotFound, "answer 404: Could not find Identity Provider: zz"},
		{"bad mapping rules", func() error {
			_, err := c.CreateMapping(ctx, keystoneapi.Mapping{ID: "m", Rules: json.RawMessage(`[{"local":[{"user":{"name":"x"}}],"remote":[{"any_one_of":["x"]}]}]`)})
			return err
		}, keystoneapi.ErrInvalidRequest, "answer 400: 'type' is a required property"},
		{"rule without remote", func() error {
			_, err := c.CreateMapping(ctx, keystoneapi.Mapping{ID: "m", Rules: json.RawMessage(`[{"local":[]}]`)})
			return err
		}, keystoneapi.ErrInvalidRequest, "'remote' is a required property"},
		{"rules that are not JSON", func() error {
			_, err := c.CreateMapping(ctx, keystoneapi.Mapping{ID: "m", Rules: json.RawMessage(`[`)})
			return err
		}, keystoneapi.ErrInvalidRequest, "the rules are not JSON"},
		{"protocol of a missing mapping", func() error {
			_, err := c.CreateProtocol(ctx, "a", keystoneapi.Protocol{ID: "openid", MappingID: "none"})
			return err
		}, keystoneapi.ErrInvalidRequest, "answer 400: Invalid mapping id: none"},
		{"protocol of a missing provider", func() error {
			_, err := c.CreateProtocol(ctx, "zz", keystoneapi.Protocol{ID: "openid", MappingID: "none"})
			return err
		}, keystoneapi.ErrNotFound, "Could not find Identity Provider: zz"},
		{"empty id", func() error {
			_, err := c.GetIdentityProvider(ctx, "")
			return err
		}, keystoneapi.ErrInvalidRequest, "is empty or holds"},
		{"id naming another path", func() error { return c.DeleteMapping(ctx, "../domains") }, keystoneapi.ErrInvalidRequest, "is empty or holds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("%v, want %v with %q", err, tc.want, tc.msg)
			}
			noSecret(t, err)
		})
	}
	if _, ok := s.IdentityProvider("b"); ok {
		t.Fatal("the provider with a duplicate remote id was created")
	}
	if _, ok := s.Mapping("m"); ok {
		t.Fatal("the refused mapping was created")
	}
	if _, ok := s.Protocol("a", "openid"); ok {
		t.Fatal("the protocol of a missing mapping was created")
	}
	if n := s.Calls("DELETE /v3/OS-FEDERATION/mappings/../domains") + s.Calls("GET /v3/OS-FEDERATION/identity_providers/"); n != 0 {
		t.Fatalf("an invalid id was sent (%d calls)", n)
	}
}

// Deleting a provider deletes its protocols, as Keystone's cascade does.
func TestDeleteIdentityProviderDeletesItsProtocols(t *testing.T) {
	s := standIn(t)
	c := newClient(t, s.URL, password)
	ctx := context.Background()
	if _, err := c.CreateIdentityProvider(ctx, keystoneapi.IdentityProvider{ID: "a", DomainID: "default", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateMapping(ctx, keystoneapi.Mapping{ID: "m", Rules: json.RawMessage(rules)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateProtocol(ctx, "a", keystoneapi.Protocol{ID: "saml2", MappingID: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteIdentityProvider(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateIdentityProvider(ctx, keystoneapi.IdentityProvider{ID: "a", DomainID: "default", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Protocol("a", "saml2"); ok {
		t.Fatal("the protocol outlived its provider")
	}
	if _, ok := s.Mapping("m"); !ok {
		t.Fatal("the mapping went with the provider; Keystone keeps it")
	}
}

// A refusal injected on a route answers every call of that verb with its status and
// message, and only that verb.
func TestFederationInjectedRefusals(t *testing.T) {
	type call struct {
		method, route string
		run           func(c *keystoneapi.Client) error
	}
	ctx := context.Background()
	calls := []call{
		{http.MethodPut, keystonetest.RouteIdentityProvider, func(c *keystoneapi.Client) error {
			_, err := c.CreateIdentityProvider(ctx, keystoneapi.IdentityProvider{ID: "new", DomainID: "default", Enabled: true})
			return err
		}},
		{http.MethodGet, keystonetest.RouteIdentityProvider, func(c *keystoneapi.Client) error { _, err := c.GetIdentityProvider(ctx, "a"); return err }},
		{http.MethodPatch, keystonetest.RouteIdentityProvider, func(c *keystoneapi.Client) error {
			_, err := c.UpdateIdentityProvider(ctx, keystoneapi.IdentityProvider{ID: "a", Enabled: true})
			return err
		}},
		{http.MethodDelete, keystonetest.RouteIdentityProvider, func(c *keystoneapi.Client) error { return c.DeleteIdentityProvider(ctx, "a") }},
		{http.MethodPut, keystonetest.RouteMapping, func(c *keystoneapi.Client) error {
			_, err := c.CreateMapping(ctx, keystoneapi.Mapping{ID: "new", Rules: json.RawMessage(rules)})
			return err
		}},
		{http.MethodGet, keystonetest.RouteMapping, func(c *keystoneapi.Client) error { _, err := c.GetMapping(ctx, "m"); return err }},
		{http.MethodPatch, keystonetest.RouteMapping, func(c *keystoneapi.Client) error {
			_, err := c.UpdateMapping(ctx, keystoneapi.Mapping{ID: "m", Rules: json.RawMessage(rules)})
			return err
		}},
		{http.MethodDelete, keystonetest.RouteMapping, func(c *keystoneapi.Client) error { return c.DeleteMapping(ctx, "m") }},
		{http.MethodPut, keystonetest.RouteProtocol, func(c *keystoneapi.Client) error {
			_, err := c.CreateProtocol(ctx, "a", keystoneapi.Protocol{ID: "saml2", MappingID: "m"})
			return err
		}},
		{http.MethodGet, keystonetest.RouteProtocol, func(c *keystoneapi.Client) error { _, err := c.GetProtocol(ctx, "a", "openid"); return err }},
		{http.MethodPatch, keystonetest.RouteProtocol, func(c *keystoneapi.Client) error {
			_, err := c.UpdateProtocol(ctx, "a", keystoneapi.Protocol{ID: "openid", MappingID: "m"})
			return err
		}},
		{http.MethodDelete, keystonetest.RouteProtocol, func(c *keystoneapi.Client) error { return c.DeleteProtocol(ctx, "a", "openid") }},
	}
	for _, tc := range calls {
		t.Run(tc.method+" "+tc.route, func(t *testing.T) {
			s := standIn(t)
			c := newClient(t, s.URL, password)
			if _, err := c.CreateIdentityProvider(ctx, keystoneapi.IdentityProvider{ID: "a", DomainID: "default", Enabled: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.CreateMapping(ctx, keystoneapi.Mapping{ID: "m", Rules: json.RawMessage(rules)}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.CreateProtocol(ctx, "a", keystoneapi.Protocol{ID: "openid", MappingID: "m"}); err != nil {
				t.Fatal(err)
			}
			s.Refuse(tc.method, tc.route, http.StatusForbidden, "You are not authorized to perform the requested action.")
			err := tc.run(c)
			if !errors.Is(err, keystoneapi.ErrForbidden) || !strings.Contains(err.Error(), "answer 403: You are not authorized") ||
				!strings.Contains(err.Error(), tc.method+" /v3/OS-FEDERATION/") {
				t.Fatalf("%v, want ErrForbidden naming the call with Keystone's message", err)
			}
			noSecret(t, err)
			// Another verb of the route is served.
			if _, err := c.GetMapping(ctx, "m"); tc.route != keystonetest.RouteMapping && err != nil {
				t.Fatalf("GetMapping under a refusal of another route: %v", err)
			}
			s.Refuse(tc.method, tc.route, 0, "")
			if err := tc.run(c); err != nil {
				t.Fatalf("after the refusal is lifted: %v", err)
			}
		})
	}
}

// A federation call that is redirected is refused: the token does not reach the
// host the redirect names.
func TestFederationRedirectNotFollowed(t *testing.T) {
	const token = "tok-fed"
	tr := newTrap(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v3/OS-FEDERATION/") {
			http.Redirect(w, r, tr.URL+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		w.Header().Set("X-Subject-Token", token)
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(srv.Close)
	_, err := newClient(t, srv.URL, password).CreateMapping(context.Background(), keystoneapi.Mapping{ID: "m", Rules: json.RawMessage(rules)})
	if !errors.Is(err, keystoneapi.ErrUnexpectedResponse) || !errors.Is(err, outbound.ErrRedirectRefused) {
		t.Fatalf("CreateMapping: %v, want ErrUnexpectedResponse wrapping ErrRedirectRefused", err)
	}
	if got := tr.got(); len(got) != 0 {
		t.Fatalf("the redirect was followed: %q", got)
	}
	noSecret(t, err, token)
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(t *testing.T, a json.RawMessage, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}
