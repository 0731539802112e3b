package katalog

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/outbound"
)

// TestOutboundOpensDoors: EngineOptions.Outbound opens what the default refuses, one
// door at a time: AllowHosts admits a name (localhost) but not the address it resolves
// to when written as an address, AllowCIDRs admits the address, AllowCrossHostRedirects
// follows a redirect to another host.
func TestOutboundOpensDoors(t *testing.T) {
	srv := newRecorder(t, nil)
	hop := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+port(t, srv.URL)+"/landed", http.StatusFound)
	})
	byName := "http://localhost:" + port(t, srv.URL) + "/by-name"
	for _, tc := range []struct {
		name    string
		policy  outbound.Policy
		url     string
		refused bool
	}{
		{"host allowed, by name", outbound.Policy{AllowHosts: []string{"localhost"}}, byName, false},
		{"host allowed, by address", outbound.Policy{AllowHosts: []string{"localhost"}}, srv.URL + "/by-address", true},
		{"CIDR allowed", outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}, srv.URL + "/by-address", false},
		{"redirect refused", outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}, hop.URL, true},
		{"redirect allowed", outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes, AllowCrossHostRedirects: true}, hop.URL, false},
	} {
		opts := DefaultEngineOptions()
		opts.Outbound = tc.policy
		e := &Engine{opts: opts}
		d := newPassData(newObject("Gadget", "ns", "g", map[string]any{}))
		err := e.runExternal(context.Background(), []ExternalCall{{Name: "c", URL: MustTemplate(tc.url)}}, d)
		if refused := errors.Is(err, ErrExternalCallRefused); refused != tc.refused {
			t.Errorf("%s: runExternal = %v, refused %v, want %v", tc.name, err, refused, tc.refused)
		}
	}
	if srv.count("GET /landed ") != 1 || srv.count("GET /by-name ") != 1 || srv.count("GET /by-address ") != 1 {
		t.Errorf("requests %v, want one each of /by-name, /by-address (the CIDR) and /landed", srv.requests())
	}
}

// TestCallerClientKeepsItsRedirectRule: a caller's HTTPClient keeps its own
// CheckRedirect, behind the engine's host rule: one that refuses every redirect still
// refuses a same-host one.
func TestCallerClientKeepsItsRedirectRule(t *testing.T) {
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/start" {
			http.Redirect(w, r, "/next", http.StatusFound)
		}
	})
	opts := testOptions()
	opts.HTTPClient = &http.Client{CheckRedirect: outbound.RefuseRedirects}
	e := &Engine{opts: opts}
	d := newPassData(newObject("Gadget", "ns", "g", map[string]any{}))
	err := e.runExternal(context.Background(), []ExternalCall{{Name: "c", URL: MustTemplate(srv.URL + "/start")}}, d)
	if !errors.Is(err, ErrExternalCallRefused) || srv.count("GET /next ") != 0 {
		t.Errorf("runExternal = %v, requests %v; want the caller's rule to refuse the redirect", err, srv.requests())
	}
}

// TestExternalCallsPerPassOption: EngineOptions.ExternalCallsPerPass sets the budget;
// NewEngine's default is DefaultExternalCallsPerPass.
func TestExternalCallsPerPassOption(t *testing.T) {
	ns := env.Namespace(t)
	srv := newRecorder(t, nil)
	opts := testOptions()
	opts.ExternalCallsPerPass = 2
	e := passEngineWith(env.Client, mustParse(t, "budget.yaml", budgetKatalog()), opts)
	g := newObject("Gadget", ns, "g", map[string]any{"url": srv.URL})
	create(t, g)
	_, c, err := passOnce(t, e, "gadget", g)
	if n := len(srv.requests()); n != 2 {
		t.Errorf("the pass made %d calls, want 2", n)
	}
	if c.Status != metav1.ConditionFalse || c.Reason != ReasonExternalCallBudgetExceeded || !strings.Contains(c.Message, "c2 not made") ||
		!errors.Is(err, ErrExternalCallBudget) {
		t.Errorf("Ready %s %s %q (%v), want the budget of 2 exceeded at c2", c.Status, c.Reason, c.Message, err)
	}
	if got := DefaultEngineOptions().ExternalCallsPerPass; got != 16 {
		t.Errorf("DefaultEngineOptions().ExternalCallsPerPass = %d, want 16", got)
	}
}
