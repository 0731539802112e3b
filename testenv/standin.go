package testenv

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/c5c3/reconciler-sdk/outbound"
)

// Answer is what a [StandIn] sends for every request: Status (0 means 200), a
// Content-Type header unless ContentType is empty, and Body.
type Answer struct {
	Status      int
	ContentType string
	Body        string
}

// StatusAnswer is the answer of status code status without a body.
func StatusAnswer(status int) Answer { return Answer{Status: status} }

// StandIn is a local HTTP server standing in for an endpoint an operator probes (a
// health check's page, an API's version document) where no such server runs. It
// answers every request with its current [Answer], which a test switches while the
// operator probes. Build it with [NewStandIn]; it listens on loopback, so the prober
// must allow loopback (outbound.LoopbackPrefixes).
type StandIn struct {
	srv    *httptest.Server
	first  Answer
	answer atomic.Pointer[Answer]
}

// NewStandIn starts a [StandIn] that answers with answer until [StandIn.Answer] says
// otherwise; it is closed when the test ends.
func NewStandIn(t testing.TB, answer Answer) *StandIn {
	s := &StandIn{first: answer}
	s.answer.Store(&answer)
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		a := s.answer.Load()
		if a.ContentType != "" {
			w.Header().Set("Content-Type", a.ContentType)
		}
		if a.Status != 0 {
			w.WriteHeader(a.Status)
		}
		_, _ = w.Write([]byte(a.Body))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// Answer makes a the answer to every later request.
func (s *StandIn) Answer(a Answer) { s.answer.Store(&a) }

// Reset makes the answer of [NewStandIn] the answer to every later request again.
func (s *StandIn) Reset() { s.Answer(s.first) }

// URL returns the stand-in's base URL followed by path, as http://127.0.0.1:port/path.
func (s *StandIn) URL(path string) string { return s.srv.URL + path }

// ProbeURL returns [StandIn.URL] of path for a custom resource whose published
// endpoint is endpoint, and "" while it has none: a reconciler's probe-URL option that
// reaches the stand-in only once the operator has published an endpoint.
func (s *StandIn) ProbeURL(endpoint, path string) string {
	if endpoint == "" {
		return ""
	}
	return s.URL(path)
}

// Outbound is the outbound policy of a prober that reaches the stand-in: the SDK's
// policy with loopback allowed.
func (s *StandIn) Outbound() outbound.Policy {
	return outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}
}

// Close stops the server before the test ends: later requests are refused, as by an
// endpoint that is down.
func (s *StandIn) Close() { s.srv.Close() }
