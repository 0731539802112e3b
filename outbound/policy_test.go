package outbound_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/outbound"
)

func TestCheck(t *testing.T) {
	cases := map[string]struct {
		reason string
		policy outbound.Policy
		host   string
		addr   string
		want   string // "" allowed, else the refused range
	}{
		"loopback v4":        {reason: "the pod itself", host: "localhost", addr: "127.0.0.1", want: "loopback"},
		"loopback anywhere":  {reason: "all of 127/8", host: "x", addr: "127.45.1.2", want: "loopback"},
		"loopback v6":        {reason: "::1", host: "ip6-localhost", addr: "::1", want: "loopback"},
		"mapped loopback":    {reason: "IPv4-mapped IPv6 is judged as IPv4", host: "x", addr: "::ffff:127.0.0.1", want: "loopback"},
		"metadata":           {reason: "cloud metadata is link-local", host: "metadata", addr: "169.254.169.254", want: "link-local"},
		"link-local v6":      {reason: "fe80::/10", host: "x", addr: "fe80::1", want: "link-local"},
		"unspecified":        {reason: "0.0.0.0 reaches the pod", host: "x", addr: "0.0.0.0", want: "unspecified"},
		"unspecified v6":     {reason: "::", host: "x", addr: "::", want: "unspecified"},
		"multicast":          {reason: "224/4", host: "x", addr: "224.0.0.1", want: "multicast"},
		"cluster address":    {reason: "Services and pods are reached", host: "svc", addr: "10.96.0.10", want: ""},
		"public":             {reason: "the internet is reached", host: "example.com", addr: "93.184.216.34", want: ""},
		"allowed cidr":       {reason: "an administrator's prefix", policy: outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}, host: "localhost", addr: "127.0.0.1", want: ""},
		"other cidr":         {reason: "a prefix admits only itself", policy: outbound.Policy{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}, host: "x", addr: "127.0.0.1", want: "loopback"},
		"allowed host":       {reason: "a host name whatever it resolves to", policy: outbound.Policy{AllowHosts: []string{"Registry.Local"}}, host: "registry.local.", addr: "127.0.0.1", want: ""},
		"allowed host exact": {reason: "no suffix match", policy: outbound.Policy{AllowHosts: []string{"local"}}, host: "registry.local", addr: "127.0.0.1", want: "loopback"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := tc.policy.Check(tc.host, netip.MustParseAddr(tc.addr))
			got := ""
			var re *outbound.RefusedError
			if errors.As(err, &re) {
				got = re.Range
				if !errors.Is(err, outbound.ErrRefused) {
					t.Errorf("%v does not wrap ErrRefused", err)
				}
			} else if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: range (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func hello(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") }

// TestDialRefusesAfterResolution dials a real listener on loopback by name and by address.
func TestDialRefusesAfterResolution(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(hello))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	for _, url := range []string{srv.URL, "http://localhost:" + port + "/"} {
		_, err := outbound.DefaultPolicy().Client(5 * time.Second).Get(url)
		var re *outbound.RefusedError
		if !errors.As(err, &re) || re.Range != "loopback" {
			t.Fatalf("GET %s: want a loopback refusal, got %v", url, err)
		}
		if re.Addr.String() != "127.0.0.1" && re.Addr.String() != "::1" {
			t.Errorf("refused address %s, want the loopback address dialled", re.Addr)
		}
		if !strings.Contains(err.Error(), "refused") {
			t.Errorf("error %q does not say refused", err)
		}
	}
	// An administrator's allow list opens the door.
	for _, p := range []outbound.Policy{{AllowCIDRs: outbound.LoopbackPrefixes}, {AllowHosts: []string{"localhost"}}} {
		resp, err := p.Client(5 * time.Second).Get("http://localhost:" + port + "/")
		if err != nil {
			t.Fatalf("allowed by %+v: %v", p, err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if string(b) != "hello" {
			t.Errorf("body %q", b)
		}
	}
}

// TestGuardTransportKeepsSettingsAndDropsBypasses: a caller's transport keeps its TLS and
// limits, loses its dial functions and proxy.
func TestGuardTransportKeepsSettingsAndDropsBypasses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(hello))
	t.Cleanup(srv.Close)
	dialled := false
	base := &http.Transport{
		MaxIdleConns: 7,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dialled = true
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
		Proxy: http.ProxyFromEnvironment,
	}
	g := outbound.DefaultPolicy().GuardTransport(base)
	if g.MaxIdleConns != 7 || g.Proxy != nil {
		t.Errorf("MaxIdleConns %d, Proxy set %v", g.MaxIdleConns, g.Proxy != nil)
	}
	_, err := (&http.Client{Transport: g}).Get(srv.URL)
	if !errors.Is(err, outbound.ErrRefused) || dialled {
		t.Fatalf("want a refusal without the caller's dialer, got %v (dialled %v)", err, dialled)
	}
	if base.DialContext == nil {
		t.Error("the caller's transport was changed")
	}
}

func TestCheckRedirect(t *testing.T) {
	var gotBody, gotToken string
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotBody, gotToken = string(b), r.Header.Get("X-Auth-Token")
		_, _ = io.WriteString(w, "landed")
	}))
	t.Cleanup(target.Close)
	_, port, _ := net.SplitHostPort(target.Listener.Addr().String())
	// The same listener under another host name: localhost vs 127.0.0.1.
	other := "http://localhost:" + port + "/landed"
	same := target.URL + "/landed"
	redirector := func(to string, code int) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/landed" {
				target.Config.Handler.ServeHTTP(w, r)
				return
			}
			http.Redirect(w, r, to, code)
		}))
		t.Cleanup(s.Close)
		return s
	}
	loop := outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}
	cases := map[string]struct {
		reason     string
		policy     outbound.Policy
		check      func(*http.Request, []*http.Request) error
		to         string
		code       int
		wantErr    bool
		wantReason string
		wantBody   string
	}{
		"cross host 307": {reason: "token and body stay home", policy: loop, to: other, code: http.StatusTemporaryRedirect, wantErr: true, wantReason: "another host"},
		"cross host 302": {reason: "any cross-host redirect", policy: loop, to: other, code: http.StatusFound, wantErr: true, wantReason: "another host"},
		"same host":      {reason: "followed", policy: loop, to: "/landed", code: http.StatusTemporaryRedirect, wantBody: "secret-body"},
		"allowed":        {reason: "the administrator's choice", policy: outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes, AllowCrossHostRedirects: true}, to: other, code: http.StatusTemporaryRedirect, wantBody: "secret-body"},
		"refuse all":     {reason: "RefuseRedirects follows none", policy: loop, check: outbound.RefuseRedirects, to: same, code: http.StatusTemporaryRedirect, wantErr: true, wantReason: "redirects are not followed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			gotBody, gotToken = "", ""
			c := tc.policy.Client(5 * time.Second)
			if tc.check != nil {
				c.CheckRedirect = tc.check
			}
			s := redirector(tc.to, tc.code)
			req, _ := http.NewRequest(http.MethodPost, s.URL+"/start?token=abc", strings.NewReader("secret-body"))
			req.Header.Set("X-Auth-Token", "tok")
			resp, err := c.Do(req)
			if resp != nil {
				_ = resp.Body.Close()
			}
			if tc.wantErr {
				var re *outbound.RedirectError
				if !errors.As(err, &re) || !errors.Is(err, outbound.ErrRedirectRefused) {
					t.Fatalf("%s: want a RedirectError, got %v", tc.reason, err)
				}
				if re.Reason != tc.wantReason || !strings.HasPrefix(re.Status, strconv.Itoa(tc.code)) {
					t.Errorf("RedirectError %+v", re)
				}
				if strings.Contains(re.Error(), "token=abc") || strings.Contains(re.Error(), "/landed") {
					t.Errorf("error %q names a path or query", re.Error())
				}
				if gotBody != "" || gotToken != "" {
					t.Errorf("the target received body %q token %q", gotBody, gotToken)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if gotBody != tc.wantBody || gotToken != "tok" {
				t.Errorf("target got body %q token %q", gotBody, gotToken)
			}
		})
	}
}

// TestRedirectHTTPSToHTTP: a downgrade on the same host is refused.
func TestRedirectHTTPSToHTTP(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(hello))
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL, http.StatusFound)
	}))
	t.Cleanup(tlsSrv.Close)
	p := outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}
	tr := p.GuardTransport(tlsSrv.Client().Transport.(*http.Transport))
	c := &http.Client{Transport: tr, CheckRedirect: p.CheckRedirect(nil)}
	_, err := c.Get(tlsSrv.URL)
	var re *outbound.RedirectError
	if !errors.As(err, &re) || re.Reason != "https to http" {
		t.Fatalf("want an https to http refusal, got %v", err)
	}
}

func TestTooManyRedirects(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srv.URL+"/again", http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	_, err := outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}.Client(5 * time.Second).Get(srv.URL)
	if !errors.Is(err, outbound.ErrTooManyRedirects) {
		t.Fatalf("got %v", err)
	}
}
