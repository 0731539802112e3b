package inspect_test

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/c5c3/reconciler-sdk/katalog/inspect"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// serve starts s until the test ends and returns its base URL.
func serve(t *testing.T, s *inspect.Server) string {
	t.Helper()
	testenv.Go(t, s.Start)
	return s.URL()
}

// fetch sends a GET of url with the bearer token (none when empty), following no
// redirect and not verifying the server's certificate, and returns the answer with its
// body read.
func fetch(t *testing.T, url, token string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // the inspector's self-signed certificate
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// Without an address the inspector listens on the loopback interface only, and there
// it answers plain HTTP without authentication, with the server's timeouts set.
func TestServerListensOnLoopbackByDefault(t *testing.T) {
	host, _, err := net.SplitHostPort(inspect.DefaultBindAddress)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		t.Fatalf("DefaultBindAddress %q is not a loopback address", inspect.DefaultBindAddress)
	}
	s, err := inspect.NewServer(newHandler(t), inspect.ServerOptions{BindAddress: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Secure() || !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("on 127.0.0.1 the inspector is secure %v at %s, want plain HTTP", s.Secure(), s.URL())
	}
	base := serve(t, s)
	if resp, body := fetch(t, base+"/katalog/widget/health", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /katalog/widget/health on loopback: %d %s", resp.StatusCode, body)
	}
	if resp, _ := fetch(t, base+"/", ""); resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/controlcenter/" {
		t.Errorf("GET /: %d to %q, want a redirect to /controlcenter/", resp.StatusCode, resp.Header.Get("Location"))
	}
	srv := inspect.HTTPServerOf(s)
	for name, got := range map[string]time.Duration{
		"ReadHeaderTimeout": srv.ReadHeaderTimeout, "ReadTimeout": srv.ReadTimeout,
		"WriteTimeout": srv.WriteTimeout, "IdleTimeout": srv.IdleTimeout,
	} {
		if got <= 0 {
			t.Errorf("the inspector's server has no %s", name)
		}
	}
	if srv.MaxHeaderBytes != inspect.ServerMaxHeaderBytes {
		t.Errorf("MaxHeaderBytes %d, want %d", srv.MaxHeaderBytes, inspect.ServerMaxHeaderBytes)
	}
}

// Every answer, a page, JSON, an error or a refused method, forbids framing and
// loading anything besides the inline stylesheet, and content sniffing.
func TestEveryAnswerForbidsFramingAndSniffing(t *testing.T) {
	s, err := inspect.NewServer(newHandler(t), inspect.ServerOptions{BindAddress: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, s)
	for _, path := range []string{"/controlcenter/", "/controlcenter/katalog/widget/cr/shop/web", "/katalog/widget/cr",
		"/katalog/nope", "/controlcenter/nope", "/katalog/widget/cr?limit=0"} {
		resp, _ := fetch(t, base+path, "")
		h := resp.Header
		if h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" ||
			h.Get("Content-Security-Policy") != inspect.ContentSecurityPolicy || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("GET %s (%d): X-Frame-Options %q, X-Content-Type-Options %q, Content-Security-Policy %q, Referrer-Policy %q",
				path, resp.StatusCode, h.Get("X-Frame-Options"), h.Get("X-Content-Type-Options"),
				h.Get("Content-Security-Policy"), h.Get("Referrer-Policy"))
		}
	}
	for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'"} {
		if !strings.Contains(inspect.ContentSecurityPolicy, want) {
			t.Errorf("ContentSecurityPolicy %q lacks %s", inspect.ContentSecurityPolicy, want)
		}
	}
}

// The list of a CRD's custom resources comes in pages of ?limit, each with the token
// of the next; following them yields every custom resource once, in order. A bad
// limit or token is 400 naming the parameter.
func TestCRListPages(t *testing.T) {
	objs := world()
	for i := range 7 {
		name := fmt.Sprintf("w%d", i)
		objs = append(objs, widget("paged", name, types.UID("uid-"+name), 1, now.Add(-time.Hour), nil))
	}
	h, err := inspect.NewAt(options(fakeClient(t, nil, objs...)), now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := inspect.NewServer(h, inspect.ServerOptions{BindAddress: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, s)
	want := []string{"dev/api"}
	for i := range 7 {
		want = append(want, fmt.Sprintf("paged/w%d", i))
	}
	want = append(want, "shop/web")

	var got []string
	pages := 0
	for next := "/katalog/widget/cr?limit=3"; next != ""; pages++ {
		if pages > 10 {
			t.Fatal("the pages never end")
		}
		resp, body := fetch(t, base+next, "")
		var list inspect.CRList
		if err := json.Unmarshal([]byte(body), &list); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", next, resp.StatusCode, body)
		}
		if len(list.Items) > 3 {
			t.Errorf("GET %s listed %d, want at most 3", next, len(list.Items))
		}
		for _, it := range list.Items {
			got = append(got, it.Namespace+"/"+it.Name)
		}
		next = ""
		if list.Continue != "" {
			next = "/katalog/widget/cr?limit=3&continue=" + url.QueryEscape(list.Continue)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || pages != 3 {
		t.Errorf("in %d pages: %v, want %v in 3", pages, got, want)
	}
	var all inspect.CRList
	resp, body := fetch(t, base+"/katalog/widget/cr", "")
	if err := json.Unmarshal([]byte(body), &all); err != nil || len(all.Items) != len(want) || all.Continue != "" {
		t.Errorf("GET without a limit: %d items, continue %q, want all %d on one page (%d)", len(all.Items), all.Continue, len(want), resp.StatusCode)
	}

	// The page of a CRD links to the next page, which shows the rest.
	resp, page := fetch(t, base+"/controlcenter/katalog/widget?limit=4", "")
	m := regexp.MustCompile(`<a href="([^"]+)" rel="next">Next page</a>`).FindStringSubmatch(page)
	if resp.StatusCode != http.StatusOK || m == nil || !strings.Contains(page, "4 shown of 9") {
		t.Fatalf("GET the CRD's page with limit 4: %d, want 4 of 9 and a link to the next page:\n%s", resp.StatusCode, page)
	}
	resp, page = fetch(t, base+strings.ReplaceAll(m[1], "&amp;", "&"), "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, ">w3</a>") || strings.Contains(page, ">w2</a>") ||
		!strings.Contains(page, "First page") {
		t.Errorf("GET the next page: %d, want w3 on, w2 not, a link to the first page:\n%s", resp.StatusCode, page)
	}

	for _, q := range []string{"limit=0", "limit=501", "limit=x", "continue=%21%21", "continue=bm9udWw"} {
		resp, body := fetch(t, base+"/katalog/widget/cr?"+q, "")
		param, _, _ := strings.Cut(q, "=")
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "query parameter "+param) {
			t.Errorf("GET ?%s: %d %s, want 400 naming %s", q, resp.StatusCode, body, param)
		}
		if resp, _ := fetch(t, base+"/controlcenter/katalog/widget?"+q, ""); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET the CRD's page with ?%s: %d, want 400", q, resp.StatusCode)
		}
	}
}

// reviewer is the ClusterRole of an inspector that reviews its clients' tokens and access.
var reviewer = &rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{
	{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
	{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
}}

// viewerToken returns a token of the ServiceAccount ns/name, which may get urls (none:
// nothing).
func viewerToken(t *testing.T, ns, name string, urls ...string) string {
	t.Helper()
	if len(urls) == 0 {
		return env.ServiceAccountToken(t, ns, name)
	}
	return env.ServiceAccountToken(t, ns, name, rbacv1.PolicyRule{NonResourceURLs: urls, Verbs: []string{"get"}})
}

// Bound beyond the loopback interface, the inspector serves HTTPS and only to a client
// whose token the API server authenticates and whose user may get the path; it runs
// as a user who may only review tokens and access.
func TestServerBeyondLoopbackAuthenticatesAndAuthorizes(t *testing.T) {
	ns := env.Namespace(t)
	viewer := viewerToken(t, ns, "viewer", "/controlcenter/*", "/katalog/*")
	jsonOnly := viewerToken(t, ns, "json-only", "/katalog/*")
	stranger := viewerToken(t, ns, "stranger")

	if _, err := inspect.NewServer(newHandler(t), inspect.ServerOptions{BindAddress: "0.0.0.0:0"}); !errors.Is(err, inspect.ErrInvalidOptions) {
		t.Fatalf("NewServer on every interface without a rest config = %v, want ErrInvalidOptions", err)
	}
	s, err := inspect.NewServer(newHandler(t), inspect.ServerOptions{BindAddress: "0.0.0.0:0", Config: env.ConfigAs(t, "inspector", reviewer)})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Secure() {
		t.Fatal("on every interface the inspector is not secure")
	}
	serve(t, s)
	_, port, _ := net.SplitHostPort(s.Addr())
	base := "https://127.0.0.1:" + port

	for _, tc := range []struct {
		name, path, token string
		code              int
	}{
		{"no token", "/controlcenter/", "", http.StatusUnauthorized},
		{"an unknown token", "/controlcenter/", "not-a-token", http.StatusUnauthorized},
		{"a user without a rule", "/katalog/widget/cr", stranger, http.StatusForbidden},
		{"a path the user's rule does not name", "/controlcenter/katalog/widget/cr/shop/web", jsonOnly, http.StatusForbidden},
		{"the user's JSON", "/katalog/widget/cr", jsonOnly, http.StatusOK},
		{"the viewer's page", "/controlcenter/katalog/widget/cr/shop/web", viewer, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := fetch(t, base+tc.path, tc.token)
			if resp.StatusCode != tc.code {
				t.Fatalf("GET %s: %d %s, want %d", tc.path, resp.StatusCode, body, tc.code)
			}
			if tc.code != http.StatusOK && strings.Contains(body, "Reconciled") {
				t.Errorf("GET %s refused with %d, but the answer shows the widget:\n%s", tc.path, tc.code, body)
			}
			if tc.code == http.StatusOK && !strings.Contains(body, "Reconciled") {
				t.Errorf("GET %s: the answer does not show the widget:\n%s", tc.path, body)
			}
		})
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://127.0.0.1:"+port+"/katalog/widget/cr", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+viewer)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK || strings.Contains(string(b), "Reconciled") {
			t.Errorf("plain HTTP to the secure inspector: %d %s", resp.StatusCode, b)
		}
	}
}
