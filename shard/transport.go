package shard

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/transport"

	"github.com/c5c3/reconciler-sdk/apply"
)

// nothing is the selector of a member that owns no range: a range of one hash, so that
// the API server sends (next to) nothing; the Gate refuses what it does send.
var nothing = Ranges{{First: 0, Last: 0}}.Selector()

// ServerSideTransport returns the wrapper (rest.Config.Wrap) of the transport of a
// manager whose informers should hold only this member's slice of resources: every
// list and watch of a collection of one of resources (all namespaces or one) is sent
// with ListOptions.shardSelector set to the member's [Member.Active] ranges, and those
// of the resources of [Member.SelectOwned] with its bucket selector. When the ranges
// change, the open watches of those resources are closed and the next watch is
// answered 410 Expired, so that each informer lists again under the new ranges: objects
// of a range gained arrive as additions, those of a range lost as deletions, and those
// kept as updates of an unchanged resourceVersion, which the controller should drop
// (predicate.ResourceVersionChangedPredicate) so as not to reconcile them again.
//
// Use it only where [ServesShardSelector] reported true: a server that ignores the
// selector sends every object, which the [Gate] then filters ([Member.OwnedTransport]
// selects only the children, on any server). Every client of the wrapped config is
// sharded the same way for those resources, uncached reads included.
func (m *Member) ServerSideTransport(resources ...schema.GroupResource) transport.WrapperFunc {
	return m.wrapper(true, resources)
}

// OwnedTransport is [Member.ServerSideTransport] for the children only: the lists and
// watches of the resources of [Member.SelectOwned] carry the member's bucket selector,
// which every API server serves; the custom resources themselves are not selected
// ([Member.Select] names none here), so their controller filters them on the client
// ([Requeue]).
func (m *Member) OwnedTransport() transport.WrapperFunc { return m.wrapper(false, nil) }

func (m *Member) wrapper(uids bool, resources []schema.GroupResource) transport.WrapperFunc {
	return func(next http.RoundTripper) http.RoundTripper {
		t := &shardTransport{next: next, m: m, uids: uids, resources: map[schema.GroupResource]bool{},
			owned: map[schema.GroupResource]bool{}, listed: map[string]uint64{}, open: map[*watchBody]bool{}}
		for _, gr := range resources {
			t.resources[gr] = true
		}
		m.mu.Lock()
		m.transports = append(m.transports, t)
		t.active = m.lastSent
		for gr := range m.owned {
			t.owned[gr] = true
		}
		m.mu.Unlock()
		return t
	}
}

// Select adds resources to those every transport of [Member.ServerSideTransport] shards
// by UID, for a kind known only once the manager exists; call it before the kind's
// informer starts. Transports of [Member.OwnedTransport] ignore it.
func (m *Member) Select(resources ...schema.GroupResource) {
	m.mu.Lock()
	transports := slices.Clone(m.transports)
	m.mu.Unlock()
	for _, t := range transports {
		t.mu.Lock()
		for _, gr := range resources {
			t.resources[gr] = t.uids
		}
		t.mu.Unlock()
	}
}

// SelectOwned adds resources to the children kinds every transport of the member
// selects by [LabelBucket]: a list or watch of one of them whose label selector is
// empty or names only apply.ManagedByLabel (an informer of the operator's children) is
// sent with [Ranges.BucketSelector] of the member's active ranges added, so it holds
// only the children of the member's custom resources (stamped by an Applier with
// [OwnerLabels]); a list or watch that selects by other labels (a registration Secret, a
// lookup by owner) is sent unchanged. Call it before the kinds' informers start.
func (m *Member) SelectOwned(resources ...schema.GroupResource) {
	m.mu.Lock()
	if m.owned == nil {
		m.owned = map[schema.GroupResource]bool{}
	}
	for _, gr := range resources {
		m.owned[gr] = true
	}
	transports := slices.Clone(m.transports)
	m.mu.Unlock()
	for _, t := range transports {
		t.mu.Lock()
		for _, gr := range resources {
			t.owned[gr] = true
		}
		t.mu.Unlock()
	}
}

// ServerSide reports whether a transport of [Member.ServerSideTransport] was built: the
// informers behind it hold only the member's slice of the custom resources.
func (m *Member) ServerSide() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.transports {
		if t.uids {
			return true
		}
	}
	return false
}

type shardTransport struct {
	next http.RoundTripper
	m    *Member
	uids bool // the custom resources of Select are selected by shardSelector

	mu        sync.Mutex
	resources map[schema.GroupResource]bool // selected by shardSelector
	owned     map[schema.GroupResource]bool // selected by LabelBucket
	gen       uint64                        // bumped whenever the member's active ranges change
	active    Ranges                        // the ranges of gen
	listed    map[string]uint64             // the gen each collection (path) was last listed at
	open      map[*watchBody]bool
}

// changed records the member's new active ranges and closes the watches opened before.
func (t *shardTransport) changed(active Ranges) {
	t.mu.Lock()
	t.gen++
	t.active = active
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

// narrowed is how a GET of a collection is narrowed: by shardSelector (uids), by the
// bucket label (owned), or not at all.
func (t *shardTransport) narrowed(req *http.Request) (uids, owned bool) {
	if req.Method != http.MethodGet {
		return false, false
	}
	gr := collection(req.URL.Path)
	t.mu.Lock()
	uids, owned = t.resources[gr], t.owned[gr]
	t.mu.Unlock()
	if uids || !owned {
		return uids, false
	}
	sel, err := labels.Parse(req.URL.Query().Get("labelSelector"))
	if err != nil {
		return false, false
	}
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		if r.Key() != apply.ManagedByLabel {
			return false, false
		}
	}
	return false, true
}

// RoundTrip implements http.RoundTripper.
func (t *shardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	uids, owned := t.narrowed(req)
	if !uids && !owned {
		return t.next.RoundTrip(req)
	}
	q := req.URL.Query()
	watching := q.Get("watch") == "true" || q.Get("watch") == "1"
	listing := !watching || q.Get("sendInitialEvents") == "true"
	path := req.URL.Path
	t.mu.Lock()
	gen, active := t.gen, t.active
	if !listing && t.listed[path] != gen {
		t.mu.Unlock()
		return expired(req), nil
	}
	if listing {
		t.listed[path] = gen
	}
	t.mu.Unlock()
	if uids {
		selector := active.Selector()
		if selector == "" {
			selector = nothing
		}
		q.Set("shardSelector", selector)
	} else {
		q.Set("labelSelector", strings.TrimPrefix(q.Get("labelSelector")+","+active.BucketSelector(), ","))
	}
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
