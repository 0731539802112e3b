package health_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/health"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

const uid = types.UID("0b5c7a0e-0000-4000-8000-000000000001")

// app is the custom resource a probe is for; its UID keys the cache.
var app = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns", UID: uid}}

func testOptions(clock *fakeClock) health.Options {
	opts := health.DefaultOptions()
	opts.Timeout = 2 * time.Second
	opts.Now = clock.Now
	opts.Outbound = loopback // the test servers listen on 127.0.0.1
	return opts
}

func TestProbeClassification(t *testing.T) {
	loginPage := func(_ int, _ http.Header, body []byte) error {
		if !strings.Contains(string(body), `<form id="login"`) {
			return errors.New("login form missing from the page")
		}
		return nil
	}
	type tc struct {
		handler  http.HandlerFunc
		url      func(t *testing.T, s *server) string // default: s.URL + "/auth/login/"
		client   func(t *testing.T) *http.Client
		validate func(int, http.Header, []byte) error
		timeout  time.Duration
		reason   string
		msg      []string
		noMsg    []string
	}
	cases := map[string]tc{
		"200": {handler: status(200, "ok"), reason: health.ReasonHealthy, msg: []string{"GET http://127.0.0.1:", "/auth/login/ returned 200 OK"}},
		"204": {handler: status(204, ""), reason: health.ReasonHealthy},
		"redirect to 200 is followed": {
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/" {
					http.Redirect(w, r, "/auth/login/", http.StatusFound)
					return
				}
				status(200, "ok")(w, r)
			},
			url:    func(_ *testing.T, s *server) string { return s.URL + "/" },
			reason: health.ReasonHealthy,
		},
		"404": {handler: status(404, "no such page"), reason: health.ReasonCheckFailed, msg: []string{"returned 404 Not Found"}},
		"500 body stays out of the message": {handler: status(500, "Traceback: SECRET_KEY=hunter2"),
			reason: health.ReasonCheckFailed, msg: []string{"returned 500 Internal Server Error"}, noMsg: []string{"hunter2", "Traceback"}},
		"503": {handler: status(503, ""), reason: health.ReasonCheckFailed, msg: []string{"503 Service Unavailable"}},
		"validated page": {handler: status(200, `<html><form id="login" method="post">`), validate: loginPage,
			reason: health.ReasonHealthy},
		"page fails validation": {handler: status(200, "<html>maintenance</html>"), validate: loginPage,
			reason: health.ReasonUnhealthy, msg: []string{"returned 200 OK but the answer is not healthy: login form missing"}},
		"validation is skipped for non-2xx": {handler: status(502, ""), validate: loginPage, reason: health.ReasonCheckFailed},
		"timeout waiting for headers": {handler: blockUntilCancelled(nil), timeout: 100 * time.Millisecond,
			reason: health.ReasonTimeout, msg: []string{"did not answer within 100ms"}},
		// The timeout covers connecting, the headers and the body. The headers are flushed
		// at once and the body then blocks until the request is cancelled, so the timeout
		// only has to be generous enough for the headers to arrive before it fires even on
		// a loaded machine; the test does not wait for anything but that timeout.
		"timeout reading the body": {
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(200)
				_, _ = w.Write([]byte("partial"))
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			},
			timeout: time.Second, reason: health.ReasonTimeout, msg: []string{"(reading the body) did not answer within 1s"}},
		"client timeout": {handler: blockUntilCancelled(nil),
			client: func(*testing.T) *http.Client { return &http.Client{Timeout: 100 * time.Millisecond} },
			reason: health.ReasonTimeout},
		"connection refused": {url: func(t *testing.T, _ *server) string { return "http://" + closedPort(t) + "/" },
			reason: health.ReasonConnectionFailed, msg: []string{"connection refused"}},
		"connection closed without an answer": {
			handler: func(w http.ResponseWriter, _ *http.Request) {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					_ = conn.Close()
				}
			},
			reason: health.ReasonConnectionFailed, msg: []string{"EOF"}},
		"TLS endpoint with an unknown CA": {
			url:    func(t *testing.T, _ *server) string { return tlsServer(t).URL + "/" },
			reason: health.ReasonConnectionFailed, msg: []string{"certificate"}},
		"password is redacted": {url: func(t *testing.T, _ *server) string { return "http://dashboard:s3cr3t@" + closedPort(t) + "/" },
			reason: health.ReasonConnectionFailed, msg: []string{"dashboard:xxxxx@"}, noMsg: []string{"s3cr3t"}},
		"query values are redacted": {
			url: func(t *testing.T, _ *server) string {
				return "http://" + closedPort(t) + "/?token=s3cr3t&region=one#frag"
			},
			reason: health.ReasonConnectionFailed, msg: []string{"/?region=xxxxx&token=xxxxx"}, noMsg: []string{"s3cr3t", "one", "frag"}},
		"empty URL": {url: func(*testing.T, *server) string { return "" },
			reason: health.ReasonEndpointNotReady, msg: []string{"no endpoint to probe yet"}},
		"host does not resolve": {url: func(*testing.T, *server) string { return "http://dashboard.openstack.svc.cluster.local.:8080/" },
			client: func(t *testing.T) *http.Client { return fakeDNS(t, 3) },
			reason: health.ReasonEndpointNotReady, msg: []string{"host dashboard.openstack.svc.cluster.local. does not resolve (yet)"}},
		"DNS server failure": {url: func(*testing.T, *server) string { return "http://dashboard.openstack.svc.cluster.local.:8080/" },
			client: func(t *testing.T) *http.Client { return fakeDNS(t, 2) },
			reason: health.ReasonConnectionFailed, msg: []string{"lookup dashboard.openstack.svc.cluster.local."}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			handler := tc.handler
			if handler == nil {
				handler = status(200, "ok")
			}
			s := newServer(t, handler)
			target := s.URL + "/auth/login/"
			if tc.url != nil {
				target = tc.url(t, s)
			}
			opts := testOptions(newClock())
			opts.Validate = tc.validate
			if tc.timeout != 0 {
				opts.Timeout = tc.timeout
			}
			if tc.client != nil {
				opts.Client = tc.client(t)
			}
			out, err := health.NewProber(opts).Flow(context.Background(), app, "APIReady", target)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			cond, res := out.Condition, out.Result
			wantStatus, wantRes := metav1.ConditionFalse, ctrl.Result{RequeueAfter: 10 * time.Second}
			if tc.reason == health.ReasonHealthy {
				wantStatus, wantRes = metav1.ConditionTrue, ctrl.Result{}
			}
			got := cond
			got.Message = ""
			want := metav1.Condition{Type: "APIReady", Status: wantStatus, Reason: tc.reason}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("condition (-want +got):\n%s\nmessage: %s", diff, cond.Message)
			}
			if res != wantRes {
				t.Errorf("result = %+v, want %+v", res, wantRes)
			}
			for _, s := range tc.msg {
				if !strings.Contains(cond.Message, s) {
					t.Errorf("message %q does not contain %q", cond.Message, s)
				}
			}
			for _, s := range tc.noMsg {
				if strings.Contains(cond.Message, s) {
					t.Errorf("message %q leaks %q", cond.Message, s)
				}
			}
		})
	}
}

func TestProbeCache(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	var mu sync.Mutex
	code := 200
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.WriteHeader(code)
	})
	setCode := func(c int) { mu.Lock(); code = c; mu.Unlock() }
	p := health.NewProber(testOptions(clock))
	target := s.URL + "/auth/login/"

	step := func(name string, u types.UID, url string, wantHealthy, wantCached bool, wantHits int64) {
		t.Helper()
		out, err := p.Probe(ctx, u, url)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if out.Healthy != wantHealthy || out.Cached != wantCached || s.hits.Load() != wantHits {
			t.Errorf("%s: healthy=%v cached=%v hits=%d, want healthy=%v cached=%v hits=%d (%s)",
				name, out.Healthy, out.Cached, s.hits.Load(), wantHealthy, wantCached, wantHits, out.Message)
		}
	}

	step("first probe", uid, target, true, false, 1)
	step("within TTL", uid, target, true, true, 1)
	clock.Step(29 * time.Second)
	step("just before expiry", uid, target, true, true, 1)
	step("another CR", "other-uid", target, true, false, 2)
	step("another endpoint", uid, target+"?x=1", true, false, 3)
	clock.Step(time.Second)
	step("expired", uid, target, true, false, 4)

	// A failing probe is not cached: every call probes, and the earlier pass is gone.
	clock.Step(30 * time.Second)
	setCode(503)
	step("failing", uid, target, false, false, 5)
	step("failing again", uid, target, false, false, 6)
	setCode(200)
	step("recovered", uid, target, true, false, 7)
	step("recovered, cached", uid, target, true, true, 7)

	// The cached message is the one of the probe that passed.
	out, _ := p.Probe(ctx, uid, target)
	if !strings.HasSuffix(out.Message, "returned 200 OK") {
		t.Errorf("cached message = %q", out.Message)
	}

	p.Forget(uid)
	step("after Forget", uid, target, true, false, 8)
	step("other CR still cached", "other-uid", target, true, false, 9) // its entry had expired
	step("other CR cached", "other-uid", target, true, true, 9)
}

func TestProbeCacheSweepsExpiredEntries(t *testing.T) {
	clock := newClock()
	s := newServer(t, status(200, ""))
	p := health.NewProber(testOptions(clock))
	for i := range 5 {
		if _, err := p.Probe(context.Background(), types.UID(fmt.Sprint("cr-", i)), s.URL); err != nil {
			t.Fatal(err)
		}
	}
	if n := p.CacheLen(); n != 5 {
		t.Fatalf("cache holds %d entries, want 5", n)
	}
	clock.Step(31 * time.Second)
	if _, err := p.Probe(context.Background(), "fresh", s.URL); err != nil {
		t.Fatal(err)
	}
	if n := p.CacheLen(); n != 1 {
		t.Errorf("after expiry and a new pass the cache holds %d entries, want 1", n)
	}
}

func TestProbeCacheDisabled(t *testing.T) {
	s := newServer(t, status(200, ""))
	opts := testOptions(newClock())
	opts.TTL = 0
	p := health.NewProber(opts)
	for range 3 {
		out, err := p.Probe(context.Background(), uid, s.URL)
		if err != nil || out.Cached {
			t.Fatalf("(%+v, %v), want an uncached pass", out, err)
		}
	}
	if s.hits.Load() != 3 {
		t.Errorf("hits = %d, want 3", s.hits.Load())
	}
}

func TestProbeCancellation(t *testing.T) {
	t.Run("cancelled while waiting", func(t *testing.T) {
		entered := make(chan struct{}, 1)
		s := newServer(t, blockUntilCancelled(entered))
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-entered; cancel() }()
		out, err := health.NewProber(testOptions(newClock())).Flow(ctx, app, "APIReady", s.URL)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if diff := cmp.Diff(reconcile.Outcome{}, out); diff != "" {
			t.Errorf("outcome reported for a cancelled probe, want zero (-want +got):\n%s", diff)
		}
	})
	t.Run("cancelled before", func(t *testing.T) {
		s := newServer(t, status(200, ""))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := health.NewProber(testOptions(newClock())).Probe(ctx, uid, s.URL)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("caller deadline shorter than the probe timeout", func(t *testing.T) {
		s := newServer(t, blockUntilCancelled(nil))
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := health.NewProber(testOptions(newClock())).Probe(ctx, uid, s.URL)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the caller's context.DeadlineExceeded, not a HealthCheckTimeout outcome", err)
		}
	})
	t.Run("a cancelled probe is not cached", func(t *testing.T) {
		s := newServer(t, status(200, ""))
		p := health.NewProber(testOptions(newClock()))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, _ = p.Probe(ctx, uid, s.URL)
		out, err := p.Probe(context.Background(), uid, s.URL)
		if err != nil || out.Cached || !out.Healthy {
			t.Errorf("(%+v, %v), want a fresh pass", out, err)
		}
	})
}

func TestProbeBadInput(t *testing.T) {
	p := health.NewProber(testOptions(newClock()))
	for _, raw := range []string{
		"dashboard.openstack.svc:8080/auth/login/",
		"ftp://dashboard.openstack.svc/",
		"http:///auth/login/",
		"http://dashboard:s3cr3t@[::1/",
		"ftp://dashboard.openstack.svc/?token=s3cr3t",
		"://missing-scheme",
	} {
		t.Run(raw, func(t *testing.T) {
			out, err := p.Flow(context.Background(), app, "APIReady", raw)
			if !errors.Is(err, health.ErrInvalidURL) {
				t.Fatalf("err = %v, want ErrInvalidURL", err)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("error %q leaks the password", err)
			}
			if diff := cmp.Diff(reconcile.Outcome{}, out); diff != "" {
				t.Errorf("outcome returned with an error (-want +got):\n%s", diff)
			}
		})
	}
	for name, tc := range map[string]struct {
		reason   string
		obj      client.Object
		condType string
		want     error
	}{
		"EmptyConditionType": {reason: "A condition needs a type.", obj: app, want: health.ErrNoConditionType},
		"NilObject":          {reason: "The cache is keyed by the object's UID.", condType: "APIReady", want: health.ErrNilObject},
		"TypedNilObject": {reason: "A typed nil is no object either.", obj: (*corev1.ConfigMap)(nil), condType: "APIReady",
			want: health.ErrNilObject},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := p.Flow(context.Background(), tc.obj, tc.condType, "http://127.0.0.1/")
			if !errors.Is(err, tc.want) {
				t.Errorf("%s\nerr = %v, want %v", tc.reason, err, tc.want)
			}
			if diff := cmp.Diff(reconcile.Outcome{}, out); diff != "" {
				t.Errorf("%s\noutcome with an error (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestCheckIsFlow: the deprecated Check answers what Flow does, as (condition, result,
// error), and shares its cache by UID.
func TestCheckIsFlow(t *testing.T) {
	s := newServer(t, status(200, "ok"))
	down := "http://" + closedPort(t) + "/"
	p := health.NewProber(testOptions(newClock()))
	type answer struct {
		Condition metav1.Condition
		Result    ctrl.Result
		Err       bool
	}
	for name, tc := range map[string]struct {
		reason   string
		url      string
		condType string
	}{
		"Healthy":            {reason: "A passing probe is True with no requeue.", url: s.URL + "/", condType: "APIReady"},
		"Failing":            {reason: "A failing probe is False with the retry.", url: down, condType: "APIReady"},
		"EmptyConditionType": {reason: "An empty type is an error with a zero condition and result.", url: s.URL + "/"},
		"InvalidURL":         {reason: "An invalid URL is an error with a zero condition and result.", url: "ftp://x/", condType: "APIReady"},
	} {
		t.Run(name, func(t *testing.T) {
			out, ferr := p.Flow(context.Background(), app, tc.condType, tc.url)
			cond, res, cerr := p.Check(context.Background(), uid, tc.url, tc.condType) //nolint:staticcheck // the deprecated wrapper under test
			want := answer{Condition: out.Condition, Result: out.Result, Err: ferr != nil}
			got := answer{Condition: cond, Result: res, Err: cerr != nil}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nCheck differs from Flow (-flow +check):\n%s", tc.reason, diff)
			}
		})
	}
	hits := s.hits.Load()
	if _, _, err := p.Check(context.Background(), uid, s.URL+"/", "APIReady"); err != nil || s.hits.Load() != hits { //nolint:staticcheck // under test
		t.Errorf("Check after Flow: err %v, %d new requests; want the probe Flow cached for the UID", err, s.hits.Load()-hits)
	}
}

func TestProbeConcurrent(t *testing.T) {
	s := newServer(t, status(200, ""))
	p := health.NewProber(testOptions(newClock()))
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			u := types.UID(fmt.Sprint("cr-", i%4))
			for range 10 {
				if out, err := p.Probe(context.Background(), u, s.URL); err != nil || !out.Healthy {
					t.Errorf("(%+v, %v)", out, err)
				}
			}
			p.Forget(u)
		})
	}
	wg.Wait()
}

func TestDefaults(t *testing.T) {
	opts := health.DefaultOptions()
	if opts.TTL != 30*time.Second || health.DefaultTTL != 30*time.Second {
		t.Errorf("TTL = %v, want 30s (spec: health-probe cache)", opts.TTL)
	}
	if health.RetryInterval != 10*time.Second {
		t.Errorf("RetryInterval = %v, want 10s (spec: health-check retry)", health.RetryInterval)
	}
	// The zero Options (but for the loopback test server) work: a default client,
	// timeout and clock.
	s := newServer(t, status(200, ""))
	out, err := health.NewProber(health.Options{Outbound: loopback}).Probe(context.Background(), uid, s.URL)
	if err != nil || !out.Healthy {
		t.Errorf("zero Options: (%+v, %v)", out, err)
	}
}

// loopback admits the test servers on 127.0.0.1, which the default policy refuses.
var loopback = outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}

// TestDefaultOptionsRefuseLoopback: with the default options a probe of the pod itself,
// by address or by a name resolving there, is never sent; the condition names the
// refused address. Fails on the old code, which probed any address.
func TestDefaultOptionsRefuseLoopback(t *testing.T) {
	s := newServer(t, status(200, "ok"))
	for _, target := range []string{s.URL + "/?token=abc", "http://localhost:" + portOf(t, s) + "/"} {
		out, err := health.NewProber(health.DefaultOptions()).Flow(context.Background(), app, "APIReady", target)
		if err != nil {
			t.Fatal(err)
		}
		cond, res := out.Condition, out.Result
		if cond.Status != metav1.ConditionFalse || cond.Reason != health.ReasonConnectionFailed || res.RequeueAfter != health.RetryInterval {
			t.Fatalf("%s: %+v %+v, want ConnectionFailed with the retry", target, cond, res)
		}
		if !strings.Contains(cond.Message, "127.0.0.1") && !strings.Contains(cond.Message, "::1") {
			t.Errorf("message %q does not name the refused address", cond.Message)
		}
		if strings.Contains(cond.Message, "abc") {
			t.Errorf("message %q quotes the query", cond.Message)
		}
	}
	if n := s.hits.Load(); n != 0 {
		t.Errorf("the refused server got %d requests", n)
	}
}

// TestProbeRefusesDowngrade: a redirect from https to http on the same host is not followed.
func TestProbeRefusesDowngrade(t *testing.T) {
	plain := newServer(t, status(200, "ok"))
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+"/", http.StatusFound)
	}))
	t.Cleanup(tlsSrv.Close)
	opts := testOptions(newClock())
	opts.Client = &http.Client{Transport: loopback.GuardTransport(tlsSrv.Client().Transport.(*http.Transport))}
	out, err := health.NewProber(opts).Probe(context.Background(), uid, tlsSrv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != health.ReasonCheckFailed || !strings.Contains(out.Message, "plain http") || plain.hits.Load() != 0 {
		t.Fatalf("%+v (plain hits %d), want HealthCheckFailed naming the downgrade", out, plain.hits.Load())
	}
}
