package shard

import (
	"bytes"
	"context"
	"io"
	"net/http"
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
// ([Requeue]). Wrap the config of every cluster the children live on with it (each
// target cluster's too): the member keeps no reference to a transport, so one dropped
// with its cluster leaves nothing behind.
func (m *Member) OwnedTransport() transport.WrapperFunc { return m.wrapper(false, nil) }

func (m *Member) wrapper(uids bool, resources []schema.GroupResource) transport.WrapperFunc {
	return func(next http.RoundTripper) http.RoundTripper {
		t := &shardTransport{next: next, m: m, uids: uids, resources: map[schema.GroupResource]bool{},
			listed: map[string]uint64{}}
		for _, gr := range resources {
			t.resources[gr] = true
		}
		if uids {
			m.mu.Lock()
			m.serverSide = true
			m.mu.Unlock()
		}
		return t
	}
}

// Select adds resources to those every transport of [Member.ServerSideTransport] shards
// by UID, built before or after, for a kind known only once the manager exists; call
// it before the kind's informer starts. Transports of [Member.OwnedTransport] ignore it.
func (m *Member) Select(resources ...schema.GroupResource) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.selected == nil {
		m.selected = map[schema.GroupResource]bool{}
	}
	for _, gr := range resources {
		m.selected[gr] = true
	}
}

// SelectOwned adds resources to the children kinds every transport of the member
// selects by [LabelBucket], built before or after and on whichever cluster's config:
// a list or watch of one of them whose label selector is empty or names only
// apply.ManagedByLabel (an informer of the operator's children) is sent with
// [Ranges.BucketSelector] of the member's active ranges added, so it holds only the
// children of the member's custom resources (stamped by an Applier with
// [OwnerLabels]); a list or watch that selects by other labels (a registration Secret, a
// lookup by owner) is sent unchanged. Call it before the kinds' informers start.
func (m *Member) SelectOwned(resources ...schema.GroupResource) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.owned == nil {
		m.owned = map[schema.GroupResource]bool{}
	}
	for _, gr := range resources {
		m.owned[gr] = true
	}
}

// ServerSide reports whether a transport of [Member.ServerSideTransport] was built: the
// informers behind it hold only the member's slice of the custom resources.
func (m *Member) ServerSide() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.serverSide
}

// shardTransport is one client's transport of a member. The member keeps no reference
// to it: what it narrows by (the member's ranges, Select's and SelectOwned's resources)
// is read from the member on every request, and only its open watches are registered
// with the member, each until it is closed or its request's context ends. So a
// transport dropped with its client (a target cluster disengaged) is garbage at once,
// and nothing of it stays behind in the member.
type shardTransport struct {
	next      http.RoundTripper
	m         *Member
	uids      bool                          // the custom resources of Select are selected by shardSelector
	resources map[schema.GroupResource]bool // selected by shardSelector; fixed when built

	mu     sync.Mutex
	listed map[string]uint64 // the member's gen each collection (path) was last listed at
}

// narrowed is how a GET of a collection is narrowed: by shardSelector (uids), by the
// bucket label (owned), or not at all; with the member's ranges to narrow by and their
// generation, read under the same lock.
func (t *shardTransport) narrowed(req *http.Request) (uids, owned bool, gen uint64, active Ranges) {
	if req.Method != http.MethodGet {
		return false, false, 0, nil
	}
	gr := collection(req.URL.Path)
	t.m.mu.Lock()
	uids, owned = t.uids && (t.resources[gr] || t.m.selected[gr]), t.m.owned[gr]
	gen, active = t.m.gen, t.m.lastSent
	t.m.mu.Unlock()
	if uids || !owned {
		return uids, false, gen, active
	}
	sel, err := labels.Parse(req.URL.Query().Get("labelSelector"))
	if err != nil {
		return false, false, 0, nil
	}
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		if r.Key() != apply.ManagedByLabel {
			return false, false, 0, nil
		}
	}
	return false, true, gen, active
}

// RoundTrip implements http.RoundTripper.
func (t *shardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	uids, owned, gen, active := t.narrowed(req)
	if !uids && !owned {
		return t.next.RoundTrip(req)
	}
	q := req.URL.Query()
	watching := q.Get("watch") == "true" || q.Get("watch") == "1"
	listing := !watching || q.Get("sendInitialEvents") == "true"
	path := req.URL.Path
	m := t.m
	t.mu.Lock()
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
	w := &watchBody{ReadCloser: resp.Body, m: m}
	m.mu.Lock()
	if m.gen != gen { // the ranges changed meanwhile
		m.mu.Unlock()
		_ = resp.Body.Close()
		return expired(req), nil
	}
	if m.open == nil {
		m.open = map[*watchBody]bool{}
	}
	m.open[w] = true
	m.mu.Unlock()
	// A watch whose request ends unread (its client stopped without closing the body)
	// is forgotten too.
	w.stop = context.AfterFunc(req.Context(), w.forget)
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
	m    *Member
	stop func() bool // stops the forget at the end of the request's context
}

// forget drops the watch from the member's open watches.
func (w *watchBody) forget() {
	w.m.mu.Lock()
	delete(w.m.open, w)
	w.m.mu.Unlock()
}

// Close implements io.Closer.
func (w *watchBody) Close() error {
	w.forget()
	w.stop()
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
