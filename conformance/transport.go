package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// request is one HTTP request the operator sent to the API server.
type request struct {
	method string
	verb   faults.Verb // "" for discovery and other non-resource paths
	path   string
	// resource, namespace, name and subresource parse the path.
	resource, namespace, name, subresource string
	watch                                  bool
	status                                 int // 0 when the call failed without an answer
	at                                     time.Time
	// injected names the fault the suite answered instead of the API server ("" for
	// none).
	injected string
}

// isWrite reports whether the request changes state on the server.
func (r request) isWrite() bool {
	switch r.method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// String renders the request as "PATCH /api/v1/namespaces/ns/configmaps/x (Apply)".
func (r request) String() string {
	s := r.method + " " + r.path
	if r.verb != "" {
		s += " (" + string(r.verb) + ")"
	}
	if r.injected != "" {
		s += " [injected " + r.injected + "]"
	} else if r.status != 0 {
		s += fmt.Sprintf(" -> %d", r.status)
	}
	return s
}

// parseRequest classifies an HTTP request to the API server by resource and verb.
func parseRequest(req *http.Request) request {
	r := request{method: req.Method, path: req.URL.Path, at: time.Now()}
	q := req.URL.Query()
	r.watch = q.Get("watch") == "true" || q.Get("watch") == "1"
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		rest = parts[3:]
	default:
		return r
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		r.namespace, rest = rest[1], rest[2:]
	}
	if len(rest) == 0 {
		return r
	}
	r.resource = rest[0]
	if len(rest) > 1 {
		r.name = rest[1]
	}
	if len(rest) > 2 {
		r.subresource = rest[2]
	}
	switch req.Method {
	case http.MethodGet:
		r.verb = faults.VerbList
		if r.name != "" {
			r.verb = faults.VerbGet
		}
	case http.MethodPost:
		r.verb = faults.VerbCreate
	case http.MethodPut:
		r.verb = faults.VerbUpdate
		if r.subresource == "status" {
			r.verb = faults.VerbStatusUpdate
		}
	case http.MethodPatch:
		switch {
		case r.subresource == "status":
			r.verb = faults.VerbStatusPatch
		case strings.HasPrefix(req.Header.Get("Content-Type"), "application/apply-patch"):
			r.verb = faults.VerbApply
		default:
			r.verb = faults.VerbPatch
		}
	case http.MethodDelete:
		r.verb = faults.VerbDelete
	}
	return r
}

// The faults the Errors check injects, by name: the names of testenv's faults.
var faultNames = []string{faults.Conflict.Name, faults.Internal.Name, faults.Timeout.Name}

// armedFault holds the one armed fault of a world.
type armedFault struct {
	mu    sync.Mutex
	verb  faults.Verb
	fault string
	fired *pass // the pass whose request met the fault
	req   request
}

// arm makes the next request of verb that a pass sends fail with fault.
func (f *armedFault) arm(verb faults.Verb, fault string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.verb, f.fault, f.fired = verb, fault, nil
}

// disarm injects nothing from now on and returns the pass that met the fault, if any,
// with the request it failed.
func (f *armedFault) disarm() (*pass, request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, r := f.fired, f.req
	f.verb, f.fault = "", ""
	return p, r
}

// firedIn reports the pass that met the armed fault, nil while none has.
func (f *armedFault) firedIn() *pass {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fired
}

// take returns the fault to inject into r, sent by p, and records it as fired.
func (f *armedFault) take(p *pass, r request) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fault == "" || f.fired != nil || r.watch || r.verb != f.verb {
		return ""
	}
	f.fired, f.req = p, r
	f.req.injected = f.fault
	return f.fault
}

// transport sits under every client of the operator: it attributes each request to
// the pass whose context sent it, records it, and injects the armed fault.
type transport struct {
	next http.RoundTripper
	w    *world
}

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := parseRequest(req)
	p, _ := req.Context().Value(passKey{}).(*pass)
	if p != nil {
		if fault := t.w.faults.take(p, r); fault != "" {
			r.injected = fault
			resp, err := t.inject(req, r, fault)
			p.record(r)
			return resp, err
		}
	}
	resp, err := t.next.RoundTrip(req)
	if resp != nil {
		r.status = resp.StatusCode
	}
	if p != nil {
		p.record(r)
	} else {
		t.w.recordBackground(r)
	}
	return resp, err
}

// inject answers req with fault: a 409 or 500 Status, or, for a timeout, the request
// served and its answer lost.
func (t *transport) inject(req *http.Request, r request, fault string) (*http.Response, error) {
	switch fault {
	case faults.Timeout.Name:
		if r.isWrite() {
			resp, err := t.next.RoundTrip(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		} else if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("conformance: injected timeout on %s %s: %w", r.method, r.path, context.DeadlineExceeded)
	case faults.Conflict.Name:
		return statusResponse(req, http.StatusConflict, metav1.StatusReasonConflict,
			"conformance: injected conflict: the object has been modified; please apply your changes to the latest version and try again"), nil
	default:
		return statusResponse(req, http.StatusInternalServerError, metav1.StatusReasonInternalError,
			"conformance: injected internal error"), nil
	}
}

// statusResponse builds an API server's failure answer.
func statusResponse(req *http.Request, code int, reason metav1.StatusReason, msg string) *http.Response {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	body, _ := json.Marshal(&metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: msg, Reason: reason, Code: int32(code),
	})
	return &http.Response{
		StatusCode:    code,
		Status:        fmt.Sprintf("%d %s", code, http.StatusText(code)),
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": []string{"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}
