package capability

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DefaultNegativeTTL is how long [Probe] reuses a "not served" verdict by default: 30 s.
const DefaultNegativeTTL = 30 * time.Second

// ProbeOptions configure [NewProbe].
type ProbeOptions struct {
	// NegativeTTL is how long a "not served" verdict is reused before the mapper is
	// asked again. Zero or negative disables the negative cache: every probe of a
	// missing kind asks the mapper (one discovery request with the dynamic mapper).
	NegativeTTL time.Duration
	// Now returns the current time; nil means time.Now. Tests inject a fake clock.
	Now func() time.Time
}

// DefaultProbeOptions returns the recommended options: a negative TTL of
// [DefaultNegativeTTL] and the wall clock. (A zero ProbeOptions disables the negative
// cache instead.)
func DefaultProbeOptions() ProbeOptions {
	return ProbeOptions{NegativeTTL: DefaultNegativeTTL, Now: time.Now}
}

// Probe is [IsKindServed] for one cluster with a negative cache: a kind found missing is
// reported missing without asking the mapper again until NegativeTTL has passed, or
// until [Probe.Forget] or [Probe.Reset] drop the verdict. Keep one Probe per cluster
// (next to that cluster's client). A Probe is safe for concurrent use.
type Probe struct {
	mapper meta.RESTMapper
	ttl    time.Duration
	now    func() time.Time

	mu      sync.Mutex
	missing map[schema.GroupVersionKind]time.Time // kind -> verdict expiry
	epoch   uint64                                // bumped by Forget and Reset
}

// NewProbe returns a Probe asking mapper, the RESTMapper of one cluster. A zero
// opts.NegativeTTL disables the negative cache (pass [DefaultProbeOptions] for the
// default TTL); a nil opts.Now means time.Now.
func NewProbe(mapper meta.RESTMapper, opts ProbeOptions) (*Probe, error) {
	if mapper == nil {
		return nil, ErrNilMapper
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Probe{mapper: mapper, ttl: opts.NegativeTTL, now: now,
		missing: map[schema.GroupVersionKind]time.Time{}}, nil
}

// IsKindServed is [IsKindServed] for the probe's cluster, answering a cached "not
// served" verdict while it is fresh. A positive verdict and an error are not cached.
func (p *Probe) IsKindServed(gvk schema.GroupVersionKind) (bool, error) {
	now := p.now()
	p.mu.Lock()
	expiry, cached := p.missing[gvk]
	epoch := p.epoch
	p.mu.Unlock()
	if cached && now.Before(expiry) {
		return false, nil
	}

	served, err := IsKindServed(p.mapper, gvk)

	p.mu.Lock()
	defer p.mu.Unlock()
	if p.epoch != epoch {
		// Forget or Reset ran while the mapper was asked: this verdict may predate
		// what made the caller forget, so it is not cached.
		return served, err
	}
	if err == nil && !served && p.ttl > 0 {
		p.missing[gvk] = now.Add(p.ttl)
	} else {
		delete(p.missing, gvk)
	}
	return served, err
}

// Forget drops the cached verdict for gvk, so that the next probe asks the mapper.
// Call it when you learn that the kind may have appeared, e.g. from a watch on
// CustomResourceDefinitions.
func (p *Probe) Forget(gvk schema.GroupVersionKind) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.missing, gvk)
	p.epoch++
}

// Reset drops every cached verdict.
func (p *Probe) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.missing)
	p.epoch++
}
