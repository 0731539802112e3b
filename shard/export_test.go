package shard

import (
	"context"
	"net/http"
	"weak"
)

// Tick runs one round of the member, for the tests of package shard_test.
func (m *Member) Tick(ctx context.Context) error { return m.tick(ctx) }

// Leave is the member's way out of Run, for the tests.
func (m *Member) Leave(ctx context.Context) error { return m.leave(ctx) }

// SnapshotHeld returns what each member holds, read under all their locks at once: an
// instant's picture, in which two members holding one hash is an overlap.
func SnapshotHeld(ms []*Member) []Ranges {
	for _, m := range ms {
		m.mu.Lock()
	}
	out := make([]Ranges, len(ms))
	for i, m := range ms {
		out[i] = m.held
	}
	for _, m := range ms {
		m.mu.Unlock()
	}
	return out
}

// OpenWatches is how many narrowed watches the member holds open, through any of its
// transports.
func (m *Member) OpenWatches() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.open)
}

// Collected returns whether rt, a transport a wrapper of the member built, has been
// garbage collected; it keeps no reference to rt.
func Collected(rt http.RoundTripper) func() bool {
	p := weak.Make(rt.(*shardTransport))
	return func() bool { return p.Value() == nil }
}
