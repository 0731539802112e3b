package katalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// outboundKatalog makes one external call, check, to the Gadget's spec.url with a token
// header and a body, and writes the status it got into status.checkStatus.
const outboundKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: outbound}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      resync: 1h
      operatorBox:
        onReconcile:
          external:
            - name: check
              url: "{{ .spec.url }}"
              method: POST
              headers: {X-Token: "{{ .spec.token }}"}
              body: '{"owner": "{{ .metadata.name }}"}'
              expectedStatus: 200
              timeout: 5s
          configMaps:
            - {name: "{{ .metadata.name }}", data: {status: "{{ .external.check.status }}"}}
        status:
          fields:
            - {path: checkStatus, value: "{{ .external.check.status }}"}
`

// recorder is an httptest server that records every request it gets.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // "METHOD PATH X-Token BODY"
}

func newRecorder(t *testing.T, h func(w http.ResponseWriter, r *http.Request)) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.seen = append(rec.seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Token")+" "+string(b))
		rec.mu.Unlock()
		if h != nil {
			h(w, r)
		}
	}))
	t.Cleanup(rec.Close)
	return rec
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

func (r *recorder) count(prefix string) int {
	n := 0
	for _, s := range r.requests() {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

// port is the port of a server's URL.
func port(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// closedAddress returns a loopback host:port nobody listens on.
func closedAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// TestExternalCallRefusedByDefault: with the default options a call whose URL (a CR
// field) names a loopback or unspecified address, or a name that resolves to one
// (localhost), is not sent; Ready is False with ReasonExternalCallRefused naming the
// refused host and address, without the port or the URL's query.
func TestExternalCallRefusedByDefault(t *testing.T) {
	ns := env.Namespace(t)
	srv := newRecorder(t, nil)
	p := port(t, srv.URL)
	startEngine(t, []*Katalog{mustParse(t, "outbound.yaml", outboundKatalog)}, DefaultEngineOptions(), ns)

	for _, tc := range []struct{ name, url, names string }{
		{"loop", srv.URL + "/x?token=t0ken", "127.0.0.1"},
		{"name", "http://localhost:" + p + "/x?token=t0ken", "localhost"},
		{"zero", "http://0.0.0.0:" + p + "/x", "0.0.0.0"},
		{"six", "http://[::1]:" + p + "/x", "::1"},
	} {
		g := newObject("Gadget", ns, tc.name, map[string]any{"url": tc.url, "token": "t0ken"})
		create(t, g)
		c := waitReady(t, g, metav1.ConditionFalse, ReasonExternalCallRefused)
		if !strings.Contains(c.Message, "check") || !strings.Contains(c.Message, tc.names) {
			t.Errorf("%s: Ready message %q does not name the call and %s", tc.name, c.Message, tc.names)
		}
		if strings.Contains(c.Message, p) || strings.Contains(c.Message, "t0ken") {
			t.Errorf("%s: Ready message %q names the port or the query", tc.name, c.Message)
		}
	}
	if got := srv.requests(); len(got) != 0 {
		t.Errorf("the loopback server got %v, want nothing", got)
	}
}

// TestExternalCallRefusedRanges: link-local (the cloud metadata address), IPv6
// link-local, multicast and the rest of 127.0.0.0/8 are refused before a connection is
// attempted, with an error wrapping ErrExternalCallRefused that names the address.
func TestExternalCallRefusedRanges(t *testing.T) {
	e := &Engine{opts: DefaultEngineOptions()}
	for _, tc := range []struct{ url, addr string }{
		{"http://169.254.169.254/latest/meta-data/iam/security-credentials/", "169.254.169.254"},
		{"http://[fe80::1]:8080/", "fe80::1"},
		{"http://224.0.0.1/", "224.0.0.1"},
		{"http://127.0.0.2:9/", "127.0.0.2"},
	} {
		d := newPassData(newObject("Gadget", "ns", "g", map[string]any{}))
		call := ExternalCall{Name: "probe", URL: MustTemplate(tc.url), Timeout: Duration{2 * time.Second}}
		err := e.runExternal(context.Background(), []ExternalCall{call}, d)
		if !errors.Is(err, ErrExternalCallRefused) || !errors.Is(err, ErrExternalCall) || !strings.Contains(fmt.Sprint(err), tc.addr) {
			t.Errorf("%s: runExternal = %v, want ErrExternalCallRefused naming %s", tc.url, err, tc.addr)
		}
		res := d["external"].(map[string]any)["probe"].(map[string]any)
		if !strings.Contains(res["error"].(string), "refused") || res["status"] != "" {
			t.Errorf("%s: .external.probe = %v, want the refusal and no status", tc.url, res)
		}
	}
}

// TestExternalCallReadyIsNoPortScanner: a call that gets no answer says "no answer",
// one that answers another status says "unexpected status": neither names the port, the
// dial error or the status code; the code is still there for the Katalog as
// .external.<name>.status.
func TestExternalCallReadyIsNoPortScanner(t *testing.T) {
	ns := env.Namespace(t)
	teapot := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	closed := closedAddress(t)
	e := passEngineWith(env.Client, mustParse(t, "outbound.yaml", outboundKatalog), testOptions())

	g := newObject("Gadget", ns, "closed", map[string]any{"url": "http://" + closed + "/"})
	create(t, g)
	_, c, _ := passOnce(t, e, "gadget", g)
	_, p, _ := net.SplitHostPort(closed)
	if c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "check: no answer") {
		t.Errorf("closed port: Ready %s %q, want False saying check got no answer", c.Status, c.Message)
	}
	for _, leak := range []string{p, "refused", "dial", "127.0.0.1"} {
		if strings.Contains(c.Message, leak) {
			t.Errorf("closed port: Ready message %q tells %q", c.Message, leak)
		}
	}

	g = newObject("Gadget", ns, "teapot", map[string]any{"url": teapot.URL})
	create(t, g)
	fresh, c, _ := passOnce(t, e, "gadget", g)
	if c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "check: unexpected status") {
		t.Errorf("418: Ready %s %q, want False saying check answered an unexpected status", c.Status, c.Message)
	}
	if strings.Contains(c.Message, "418") || strings.Contains(c.Message, port(t, teapot.URL)) {
		t.Errorf("418: Ready message %q names the status or the port", c.Message)
	}
	if got, _, _ := unstructured.NestedString(fresh.Object, "status", "checkStatus"); got != "418" {
		t.Errorf("status.checkStatus = %q, want the status the Katalog reads, 418", got)
	}
}

// TestExternalCallRedirectsStayOnTheHost: a redirect to another host is not followed,
// with the engine's client and with a bare http.Client given as EngineOptions.HTTPClient
// alike: the other host gets neither the token header nor the re-sent body of a 307, and
// Ready is False with ReasonExternalCallRefused naming the host, not the status. A
// redirect on the same host is followed.
func TestExternalCallRedirectsStayOnTheHost(t *testing.T) {
	other := newRecorder(t, nil)
	away := "http://localhost:" + port(t, other.URL) + "/steal"
	first := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, away, http.StatusTemporaryRedirect)
		case "/same":
			http.Redirect(w, r, "/final", http.StatusPermanentRedirect)
		}
	})
	bare := testOptions()
	bare.HTTPClient = &http.Client{}
	for name, opts := range map[string]EngineOptions{"engine client": testOptions(), "caller client": bare} {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			e := passEngineWith(env.Client, mustParse(t, "outbound.yaml", outboundKatalog), opts)

			g := newObject("Gadget", ns, "away", map[string]any{"url": first.URL + "/away", "token": "t0ken"})
			create(t, g)
			_, c, _ := passOnce(t, e, "gadget", g)
			if c.Reason != ReasonExternalCallRefused || !strings.Contains(c.Message, "localhost") {
				t.Errorf("Ready %s %q, want %s naming localhost", c.Reason, c.Message, ReasonExternalCallRefused)
			}
			if strings.Contains(c.Message, "307") || strings.Contains(c.Message, "steal") {
				t.Errorf("Ready message %q names the redirect's status or path", c.Message)
			}
			if got := other.requests(); len(got) != 0 {
				t.Fatalf("the other host got %v", got)
			}

			g = newObject("Gadget", ns, "same", map[string]any{"url": first.URL + "/same", "token": "t0ken"})
			create(t, g)
			if _, c, _ = passOnce(t, e, "gadget", g); c.Status != metav1.ConditionTrue {
				t.Errorf("same-host redirect: Ready %s %q, want True", c.Status, c.Message)
			}
			if first.count(`POST /final t0ken {"owner": "same"}`) == 0 {
				t.Errorf("the same-host redirect was not followed with its header and body: %v", first.requests())
			}
		})
	}
}

// budgetKatalog makes 17 calls in one pass, c0 to c16.
func budgetKatalog() string {
	var b strings.Builder
	b.WriteString(`
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: budget}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      resync: 1h
      operatorBox:
        onCreate:
          external:
            - {name: c0, url: "{{ .spec.url }}/0"}
        onReconcile:
          external:
`)
	for i := 1; i <= 16; i++ {
		fmt.Fprintf(&b, "            - {name: c%d, url: \"{{ .spec.url }}/%d\"}\n", i, i)
	}
	return b.String()
}

// TestExternalCallBudget: one pass makes at most DefaultExternalCallsPerPass (16) calls,
// onCreate and onReconcile together; the 17th is not made and Ready is False with
// ReasonExternalCallBudgetExceeded naming the call and the budget.
func TestExternalCallBudget(t *testing.T) {
	ns := env.Namespace(t)
	srv := newRecorder(t, nil)
	e := passEngineWith(env.Client, mustParse(t, "budget.yaml", budgetKatalog()), testOptions())
	g := newObject("Gadget", ns, "g", map[string]any{"url": srv.URL})
	create(t, g)
	_, c, _ := passOnce(t, e, "gadget", g)
	if n := len(srv.requests()); n != DefaultExternalCallsPerPass {
		t.Errorf("the pass made %d calls, want %d", n, DefaultExternalCallsPerPass)
	}
	if srv.count("GET /16 ") != 0 {
		t.Error("the call past the budget was made")
	}
	if c.Reason != ReasonExternalCallBudgetExceeded || !strings.Contains(c.Message, "c16") || !strings.Contains(c.Message, "16 external calls") {
		t.Errorf("Ready %s %q, want %s naming c16 and the budget of 16", c.Reason, c.Message, ReasonExternalCallBudgetExceeded)
	}
}

// onCreateCallsKatalog registers a Gadget once (onCreate) and pings on every pass
// (onReconcile); the registered ConfigMap needs the registration's 200, the extra one
// spec.extra.
const onCreateCallsKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: oncreatecalls}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      resync: 1h
      operatorBox:
        onCreate:
          external:
            - {name: register, url: "{{ .spec.url }}/register", method: POST, expectedStatus: 200}
          configMaps:
            - name: "{{ .metadata.name }}-registered"
              data: {k: v}
              when: [{field: external.register.status, equals: "200"}]
            - name: "{{ .metadata.name }}-extra"
              data: {k: v}
              when: [{field: spec.extra, equals: "yes"}]
        onReconcile:
          external:
            - {name: ping, url: "{{ .spec.url }}/ping"}
`

// TestOnCreateCallsOnlyUntilCreated: onCreate's calls are made until its objects exist,
// not on every pass; onReconcile's are made on every pass. An onCreate object gated on
// the call's result stays; so does one whose other condition stops holding (an onCreate
// object's conditions gate its creation only); one that goes missing makes the calls
// again.
func TestOnCreateCallsOnlyUntilCreated(t *testing.T) {
	ns := env.Namespace(t)
	ctx := context.Background()
	srv := newRecorder(t, nil)
	e := passEngineWith(env.Client, mustParse(t, "oncreatecalls.yaml", onCreateCallsKatalog), testOptions())
	g := newObject("Gadget", ns, "g", map[string]any{"url": srv.URL, "extra": "yes"})
	create(t, g)
	exists := func(name string) bool {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ConfigMap{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	pass := func(wantRegister, wantPing int) {
		t.Helper()
		if _, c, err := passOnce(t, e, "gadget", g); c.Status != metav1.ConditionTrue {
			t.Fatalf("Ready %s %q (%v)", c.Status, c.Message, err)
		}
		if got := srv.count("POST /register "); got != wantRegister {
			t.Errorf("register called %d times, want %d", got, wantRegister)
		}
		if got := srv.count("GET /ping "); got != wantPing {
			t.Errorf("ping called %d times, want %d", got, wantPing)
		}
		if !exists("g-registered") {
			t.Error("the registered ConfigMap is missing")
		}
	}
	pass(1, 1)
	pass(1, 2)
	pass(1, 3)
	if !exists("g-extra") {
		t.Fatal("the extra ConfigMap is missing")
	}

	// A condition that does not read .external is still evaluated.
	fresh := g.DeepCopy()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(g), fresh); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(fresh.Object, "no", "spec", "extra"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Update(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	pass(1, 4)
	if !exists("g-extra") {
		t.Error("the extra onCreate ConfigMap whose condition stopped holding was deleted")
	}

	// A missing onCreate object: the calls are made again, and it is created.
	if err := env.Client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g-registered"}}); err != nil {
		t.Fatal(err)
	}
	pass(2, 5)
	pass(2, 6)
}

// TestExternalCallErrorsRedactURL: neither Ready nor the engine's log carries a URL's
// user info or query: not for a URL that does not parse (whose parser error quotes it
// whole), not for one that gets no answer, not for a token header.
func TestExternalCallErrorsRedactURL(t *testing.T) {
	ns := env.Namespace(t)
	e := passEngineWith(env.Client, mustParse(t, "outbound.yaml", outboundKatalog), testOptions())
	for _, tc := range []struct{ name, url string }{
		{"badport", "http://user:s3cret@127.0.0.1:bad/p?token=t0ken"},
		{"hostport", "http://token:s3cret/p?token=t0ken"},
		{"control", "http://user:s3cret@127.0.0.1/p\x7f?token=t0ken"},
		{"closed", "http://user:s3cret@" + closedAddress(t) + "/p?token=t0ken"},
	} {
		g := newObject("Gadget", ns, tc.name, map[string]any{"url": tc.url, "token": "t0ken"})
		create(t, g)
		var logged strings.Builder
		logger := funcr.New(func(prefix, args string) { logged.WriteString(prefix + " " + args + "\n") }, funcr.Options{Verbosity: 1})
		_, _ = e.recs["gadget"].Reconcile(log.IntoContext(context.Background(), logger), reconcileRequest(g))
		fresh := g.DeepCopy()
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(g), fresh); err != nil {
			t.Fatal(err)
		}
		c, err := readyCondition(context.Background(), fresh)
		if err != nil {
			t.Fatal(err)
		}
		if c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "check") {
			t.Errorf("%s: Ready %s %q, want False naming the call", tc.name, c.Status, c.Message)
		}
		for _, secret := range []string{"s3cret", "t0ken"} {
			if strings.Contains(c.Message, secret) {
				t.Errorf("%s: Ready message %q carries %s", tc.name, c.Message, secret)
			}
			if strings.Contains(logged.String(), secret) {
				t.Errorf("%s: the log carries %s:\n%s", tc.name, secret, logged.String())
			}
		}
		if logged.Len() == 0 {
			t.Errorf("%s: nothing logged about the failed call", tc.name)
		}
	}
}

// TestExternalBodyCapped: .external.<name>.body keeps the first MiB of an answer.
func TestExternalBodyCapped(t *testing.T) {
	big := strings.Repeat("x", maxExternalBody+10)
	srv := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, big) })
	e := &Engine{opts: testOptions()}
	d := newPassData(newObject("Gadget", "ns", "g", map[string]any{}))
	call := ExternalCall{Name: "big", URL: MustTemplate(srv.URL)}
	if err := e.runExternal(context.Background(), []ExternalCall{call}, d); err != nil {
		t.Fatal(err)
	}
	if got := len(d["external"].(map[string]any)["big"].(map[string]any)["body"].(string)); got != maxExternalBody {
		t.Errorf("body of %d bytes kept, want %d", got, maxExternalBody)
	}
}

// TestURLQueryEscapesCRValues: urlquery escapes a value so that it stays one path
// segment or query value: a CR value cannot add a path, a query, a fragment or user info
// to a URL whose host the Katalog fixes.
func TestURLQueryEscapesCRValues(t *testing.T) {
	tmpl := MustTemplate("http://registry.internal/v2/{{ .spec.image | urlquery }}/manifests/latest?tag={{ .spec.tag | urlquery }}")
	d := newPassData(newObject("Application", "ns", "a", map[string]any{"image": "x/../../admin?all=1#f", "tag": "1&user=@evil.example"}))
	got, err := render(tmpl, d, "url")
	if err != nil {
		t.Fatal(err)
	}
	want := "http://registry.internal/v2/x%2F..%2F..%2Fadmin%3Fall%3D1%23f/manifests/latest?tag=1%26user%3D%40evil.example"
	if got != want {
		t.Fatalf("rendered %s\nwant     %s", got, want)
	}
	u, err := url.Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	if u.Host != "registry.internal" || u.User != nil || u.Fragment != "" || len(u.Query()) != 1 || u.Query().Get("tag") != "1&user=@evil.example" {
		t.Errorf("parsed %+v: the CR values changed the URL's structure", u)
	}
	// A missing value renders empty, as everywhere else.
	if got, err := render(MustTemplate("/v2/{{ .spec.missing | urlquery }}/x"), d, "url"); err != nil || got != "/v2//x" {
		t.Errorf("missing value: %q %v, want /v2//x", got, err)
	}
}
