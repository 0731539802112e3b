package health_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/c5c3/reconciler-sdk/health"
)

// loopbackClient dials every host name at 127.0.0.1, on the port of the URL, so that
// tests can give servers on 127.0.0.1 distinct host names.
func loopbackClient() *http.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Proxy = nil
	transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if _, port, err := net.SplitHostPort(addr); err == nil {
			addr = net.JoinHostPort("127.0.0.1", port)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: transport}
}

func hostPort(t *testing.T, s *server) string {
	t.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// TestProbeRefusesCrossHostRedirects: a redirect to another host is not followed unless
// the options allow it; a redirect on the same host is.
func TestProbeRefusesCrossHostRedirects(t *testing.T) {
	for name, tc := range map[string]struct {
		client   bool   // a caller's own client (with host names mapped)
		from, to string // host names; "" means the server's own 127.0.0.1 address
		allow    bool
		followed bool
	}{
		"to another host":                           {to: "localhost"},
		"to another host, caller's client":          {client: true, from: "dashboard.test", to: "evil.test"},
		"to another host, allowed":                  {to: "localhost", allow: true, followed: true},
		"to another host, caller's client, allowed": {client: true, from: "dashboard.test", to: "evil.test", allow: true, followed: true},
		"same host, caller's client":                {client: true, from: "dashboard.test", to: "dashboard.test", followed: true},
		"same host, other case":                     {client: true, from: "dashboard.test", to: "DASHBOARD.test", followed: true},
	} {
		t.Run(name, func(t *testing.T) {
			target := newServer(t, status(200, "ok"))
			targetHost := hostPort(t, target)
			redirector := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				host := targetHost
				if tc.to != "" {
					host = tc.to + ":" + portOf(t, target)
				}
				http.Redirect(w, r, "http://"+host+"/auth/login/?next=/", http.StatusFound)
			})
			start := redirector.URL + "/"
			opts := testOptions(newClock())
			opts.AllowCrossHostRedirects = tc.allow
			if tc.client {
				start = "http://" + tc.from + ":" + portOf(t, redirector) + "/"
				opts.Client = loopbackClient()
			}
			out, err := health.NewProber(opts).Probe(context.Background(), uid, start)
			if err != nil {
				t.Fatal(err)
			}
			if got := target.hits.Load() > 0; got != tc.followed {
				t.Fatalf("redirect followed = %v, want %v (%+v)", got, tc.followed, out)
			}
			if tc.followed {
				if !out.Healthy {
					t.Errorf("outcome %+v, want healthy after the redirect", out)
				}
				return
			}
			if out.Healthy || out.Reason != health.ReasonCheckFailed {
				t.Errorf("outcome %+v, want %s", out, health.ReasonCheckFailed)
			}
			for _, want := range []string{"302 Found", "redirect to another host", tc.to} {
				if !strings.Contains(out.Message, want) {
					t.Errorf("message %q does not contain %q", out.Message, want)
				}
			}
		})
	}
}

func portOf(t *testing.T, s *server) string {
	t.Helper()
	_, port, err := net.SplitHostPort(hostPort(t, s))
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// TestProbeRefusesRedirectChainsThatLeaveTheHost: every hop is checked against the
// probed host, not only against the previous hop.
func TestProbeRefusesRedirectChainsThatLeaveTheHost(t *testing.T) {
	target := newServer(t, status(200, "ok"))
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			http.Redirect(w, r, "/hop", http.StatusFound)
			return
		}
		http.Redirect(w, r, "http://localhost:"+portOf(t, target)+"/", http.StatusMovedPermanently)
	})
	out, err := health.NewProber(testOptions(newClock())).Probe(context.Background(), uid, s.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if target.hits.Load() != 0 || out.Reason != health.ReasonCheckFailed || s.hits.Load() != 2 {
		t.Errorf("outcome %+v after %d hops, target hit %d times; want the second hop refused", out, s.hits.Load(), target.hits.Load())
	}
}

// rawServer answers every connection with response, verbatim, and closes it.
func rawServer(t *testing.T, response string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { _ = l.Close(); <-done })
	go func() {
		defer close(done)
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			r := bufio.NewReader(conn)
			for { // read the request head
				line, err := r.ReadString('\n')
				if err != nil || line == "\r\n" {
					break
				}
			}
			_, _ = conn.Write([]byte(response))
			_ = conn.Close()
		}
	}()
	return "http://" + l.Addr().String() + "/"
}

// TestProbeCapsServerText: whatever a server sends — a status line of 100 KiB, bytes
// that are not UTF-8, a garbage answer, a huge validation error — the condition message
// stays short, valid UTF-8, and says where it was cut.
func TestProbeCapsServerText(t *testing.T) {
	long := strings.Repeat("A", 100<<10)
	cases := map[string]struct {
		response string
		validate func(int, http.Header, []byte) error
		reason   string
	}{
		"long status line":      {response: "HTTP/1.1 503 " + long + "\r\nContent-Length: 0\r\n\r\n", reason: health.ReasonCheckFailed},
		"long 200 status line":  {response: "HTTP/1.1 200 " + long + "\r\nContent-Length: 0\r\n\r\n", reason: health.ReasonHealthy},
		"invalid UTF-8":         {response: "HTTP/1.1 500 \xff\xfe\xfd" + long + "\r\nContent-Length: 0\r\n\r\n", reason: health.ReasonCheckFailed},
		"malformed status line": {response: "HTTP/1.1 " + long + "\r\n\r\n", reason: health.ReasonConnectionFailed},
		"long validation error": {response: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", reason: health.ReasonUnhealthy,
			validate: func(int, http.Header, []byte) error { return &textError{long} }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := testOptions(newClock())
			opts.Validate = tc.validate
			out, err := health.NewProber(opts).Flow(context.Background(), app, "APIReady", rawServer(t, tc.response))
			if err != nil {
				t.Fatal(err)
			}
			cond := out.Condition
			if cond.Reason != tc.reason {
				t.Errorf("reason %s, want %s (%.200s)", cond.Reason, tc.reason, cond.Message)
			}
			if len(cond.Message) > 1024 || !utf8.ValidString(cond.Message) || !strings.Contains(cond.Message, "…") {
				t.Errorf("message of %d bytes (valid UTF-8: %v), want at most 1024 and cut with an ellipsis: %.300q",
					len(cond.Message), utf8.ValidString(cond.Message), cond.Message)
			}
			if !strings.HasPrefix(cond.Message, "GET http://127.0.0.1:") {
				t.Errorf("message %.100q does not say what was probed", cond.Message)
			}
		})
	}
}

type textError struct{ s string }

func (e *textError) Error() string { return e.s }

// TestProbeCapsALongURL: the probed URL comes from the object, not the server, but a
// long one must not push the message over the API's limit either.
func TestProbeCapsALongURL(t *testing.T) {
	s := newServer(t, status(503, ""))
	out, err := health.NewProber(testOptions(newClock())).Probe(context.Background(), uid, s.URL+"/"+strings.Repeat("p", 40000))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Message) > health.MaxMessageLength || !strings.Contains(out.Message, "503") {
		t.Errorf("message of %d bytes, want at most %d and the status kept", len(out.Message), health.MaxMessageLength)
	}
}
