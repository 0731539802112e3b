package shard

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/transport"
)

// nothing is the selector of a member that owns no range: a range of one hash, so that
// the API server sends (next to) nothing; the Gate refuses what it does send.
var nothing = Ranges{{First: 0, Last: 0}}.Selector()

// ServerSideTransport returns the wrapper (rest.Config.Wrap) of the transport of a
// manager whose informers should hold only this member's slice of resources: every
// list and watch of a collection of one of resources (all namespaces or one) is sent
// with ListOptions.shardSelector set to the member's [Member.Active] ranges. When the
// ranges change, the open watches of those resources are closed and the next watch is
// answered 410 Expired, so that each informer lists again under the new ranges: objects
// of a range gained arrive as additions, those of a range lost as deletions, and those
// kept as updates of an unchanged resourceVersion, which the controller should drop
// (predicate.ResourceVersionChangedPredicate) so as not to reconcile them again.
//
// Use it only where [ServesShardSelector] reported true: a server that ignores the
// selector sends every object, which the [Gate] then filters. Every client of the
// wrapped config is sharded the same way for those resources, uncached reads included.
func (m *Member) ServerSideTransport(resources ...schema.GroupResource) transport.WrapperFunc {
	return func(next http.RoundTripper) http.RoundTripper {
		t := &shardTransport{next: next, m: m, resources: map[schema.GroupResource]bool{},
			listed: map[string]uint64{}, open: map[*watchBody]bool{}}
		for _, gr := range resources {
			t.resources[gr] = true
		}
		m.mu.Lock()
		m.transports = append(m.transports, t)
		t.selector = m.lastSent.Selector()
		m.mu.Unlock()
		return t
	}
}

// Select adds resources to those every transport of [Member.ServerSideTransport] shards,
// for a kind known only once the manager exists; call it before the kind's informer
// starts.
func (m *Member) Select(resources ...schema.GroupResource) {
	m.mu.Lock()
	transports := slices.Clone(m.transports)
	m.mu.Unlock()
	for _, t := range transports {
		t.mu.Lock()
		for _, gr := range resources {
			t.resources[gr] = true
		}
		t.mu.Unlock()
	}
}

// ServerSide reports whether a transport of [Member.ServerSideTransport] was built: the
// informers behind it hold only the member's slice.
func (m *Member) ServerSide() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.transports) > 0
}

type shardTransport struct {
	next http.RoundTripper
	m    *Member

	mu        sync.Mutex
	resources map[schema.GroupResource]bool
	gen       uint64            // bumped whenever the member's active ranges change
	selector  string            // the selector of gen
	listed    map[string]uint64 // the gen each collection (path) was last listed at
	open      map[*watchBody]bool
}

// changed records the member's new active ranges and closes the watches opened before.
func (t *shardTransport) changed(active Ranges) {
	t.mu.Lock()
	t.gen++
	t.selector = active.Selector()
	var stale []*watchBody
	for w := range t.open {
		stale = append(stale, w)
		delete(t.open, w)
	}
	t.mu.Unlock()
	for _, w := range stale {
		_ = w.ReadCloser.Close()
	}
}

// RoundTrip implements http.RoundTripper.
func (t *shardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.Lock()
	sharded := req.Method == http.MethodGet && t.resources[collection(req.URL.Path)]
	t.mu.Unlock()
	if !sharded {
		return t.next.RoundTrip(req)
	}
	q := req.URL.Query()
	watching := q.Get("watch") == "true" || q.Get("watch") == "1"
	listing := !watching || q.Get("sendInitialEvents") == "true"
	path := req.URL.Path
	t.mu.Lock()
	gen, selector := t.gen, t.selector
	if selector == "" {
		selector = nothing
	}
	if !listing && t.listed[path] != gen {
		t.mu.Unlock()
		return expired(req), nil
	}
	if listing {
		t.listed[path] = gen
	}
	t.mu.Unlock()
	q.Set("shardSelector", selector)
	req = req.Clone(req.Context())
	req.URL.RawQuery = q.Encode()
	resp, err := t.next.RoundTrip(req)
	if err != nil || !watching || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	w := &watchBody{ReadCloser: resp.Body, t: t}
	t.mu.Lock()
	if t.gen != gen { // the ranges changed meanwhile
		t.mu.Unlock()
		_ = resp.Body.Close()
		return expired(req), nil
	}
	t.open[w] = true
	t.mu.Unlock()
	resp.Body = w
	return resp, nil
}

// expired is the 410 answer that makes a reflector list again.
func expired(req *http.Request) *http.Response {
	body := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"shard ranges changed: list again","reason":"Expired","code":410}`
	return &http.Response{StatusCode: http.StatusGone, Status: "410 Gone", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": []string{"application/json"}}, Body: io.NopCloser(bytes.NewBufferString(body)),
		ContentLength: int64(len(body)), Request: req}
}

// watchBody is an open watch's body, closed early when the ranges change.
type watchBody struct {
	io.ReadCloser
	t *shardTransport
}

// Close implements io.Closer.
func (w *watchBody) Close() error {
	w.t.mu.Lock()
	delete(w.t.open, w)
	w.t.mu.Unlock()
	return w.ReadCloser.Close()
}

// collection is the group and resource of a collection path (/api/v1/[namespaces/NS/]R
// or /apis/G/V/[namespaces/NS/]R); the zero GroupResource for any other path.
func collection(path string) schema.GroupResource {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		group, parts = parts[1], parts[3:]
	default:
		return schema.GroupResource{}
	}
	switch len(parts) {
	case 1:
		return schema.GroupResource{Group: group, Resource: parts[0]}
	case 3:
		if parts[0] == "namespaces" {
			return schema.GroupResource{Group: group, Resource: parts[2]}
		}
	}
	return schema.GroupResource{}
}
