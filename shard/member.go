package shard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Labels and annotations of a member's Lease.
const (
	// LabelRing is the label every Lease of a ring carries, its value the ring's name:
	// a member lists the ring's Leases by it.
	LabelRing = "shard.reconciler-sdk.c5c3.io/ring"
	// AnnotationHeld records the ranges the member reconciles ([Ranges.String]).
	AnnotationHeld = "shard.reconciler-sdk.c5c3.io/held"
	// AnnotationClaimed records the ranges the member asked for and does not reconcile
	// yet.
	AnnotationClaimed = "shard.reconciler-sdk.c5c3.io/claimed"
)

// Defaults of [Options].
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewPeriod   = 2 * time.Second
)

// Errors of [NewMember] and [ParseRanges].
var (
	// ErrInvalidOptions: the Options cannot work; the error names the field.
	ErrInvalidOptions = errors.New("shard: invalid options")
	// ErrBadRanges: a Lease's ranges annotation does not parse.
	ErrBadRanges = errors.New("shard: bad ranges")
)

// Options configure a [Member].
type Options struct {
	// Namespace is where the ring's Leases live (the operator's own namespace).
	Namespace string
	// Ring names the ring: the operator's replicas share it, and it is the first part of
	// every member's Lease name (<Ring>-<Identity>).
	Ring string
	// Identity names this replica, unique in the ring; empty means the host name (the
	// pod's name).
	Identity string
	// LeaseDuration is how long a member's Lease stays valid without a renewal: a
	// replica that stops renewing loses its ranges to the others after it.
	LeaseDuration time.Duration
	// RenewPeriod is how often a member renews its Lease and reads the ring's; it must
	// be at most a quarter of LeaseDuration.
	RenewPeriod time.Duration
	// VirtualNodes is each member's number of points on the ring ([Assign]).
	VirtualNodes int
}

// DefaultOptions are the options of a member of ring in namespace, named after the host,
// with a 15 s Lease renewed every 2 s.
func DefaultOptions(namespace, ring string) Options {
	return Options{Namespace: namespace, Ring: ring, LeaseDuration: DefaultLeaseDuration,
		RenewPeriod: DefaultRenewPeriod, VirtualNodes: DefaultVirtualNodes}
}

// Member is one replica's place in a ring of replicas that split the custom resources
// between them by the hash of their UIDs. See the package documentation for the
// protocol. Build it with [NewMember], run it with [Member.Run], and admit each pass with
// [Member.Admit].
type Member struct {
	c    client.Client
	opts Options
	name string // its Lease's name

	mu         sync.Mutex
	held       Ranges    // the ranges this replica reconciles, or drains
	target     Ranges    // what the ring assigns it as it last read the ring
	claimed    Ranges    // asked for, not held yet
	written    Ranges    // the claims its Lease showed when the ring was last read
	fence      time.Time // passes are admitted until then: the last renewal's start + LeaseDuration - RenewPeriod
	inFlight   map[uint64]int
	drained    chan struct{} // closed and replaced whenever a pass ends
	observed   map[string]observation
	lease      *coordinationv1.Lease
	listeners  []chan Ranges
	owned      map[schema.GroupResource]bool // SelectOwned's, read by every transport on each request
	selected   map[schema.GroupResource]bool // Select's, read by the transports of ServerSideTransport
	serverSide bool                          // a transport of ServerSideTransport was built
	lastSent   Ranges                        // the active ranges the transports narrow by
	gen        uint64                        // bumped whenever lastSent changes
	open       map[*watchBody]bool           // the narrowed watches open through any transport
	released   bool                          // left the ring: its Lease has no holder
	gated      int                           // reconcilers Gate wrapped with this member
}

// observation is when a member last saw another member's Lease change, by its own
// clock, and what that Lease then held or claimed.
type observation struct {
	resourceVersion string
	at              time.Time
	occupied        Ranges
	// vanished is when the member first listed the ring without this Lease (someone
	// deleted it); zero while it is listed.
	vanished time.Time
}

// NewMember checks opts and returns the member of opts.Ring it describes. c must read
// from the API server, not from a cache (client.New, or the manager's GetAPIReader for
// reads): a member's safety rests on reading the other members' latest Leases.
func NewMember(c client.Client, opts Options) (*Member, error) {
	if opts.Identity == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("%w: Identity is empty and the host name unknown: %w", ErrInvalidOptions, err)
		}
		opts.Identity = host
	}
	d := DefaultOptions(opts.Namespace, opts.Ring)
	opts.LeaseDuration = cmp.Or(opts.LeaseDuration, d.LeaseDuration)
	opts.RenewPeriod = cmp.Or(opts.RenewPeriod, d.RenewPeriod)
	switch {
	case c == nil:
		return nil, fmt.Errorf("%w: nil client", ErrInvalidOptions)
	case opts.Namespace == "":
		return nil, fmt.Errorf("%w: Namespace is empty", ErrInvalidOptions)
	case len(validation.IsDNS1123Label(opts.Ring)) > 0:
		return nil, fmt.Errorf("%w: Ring %q is not a DNS label", ErrInvalidOptions, opts.Ring)
	case len(validation.IsDNS1123Subdomain(opts.Ring+"-"+opts.Identity)) > 0:
		return nil, fmt.Errorf("%w: Identity %q does not make a Lease name", ErrInvalidOptions, opts.Identity)
	case opts.RenewPeriod*4 > opts.LeaseDuration:
		return nil, fmt.Errorf("%w: RenewPeriod %s is more than a quarter of LeaseDuration %s", ErrInvalidOptions, opts.RenewPeriod, opts.LeaseDuration)
	}
	return &Member{c: c, opts: opts, name: opts.Ring + "-" + opts.Identity, inFlight: map[uint64]int{},
		drained: make(chan struct{}), observed: map[string]observation{}}, nil
}

// Gated is how many reconcilers [Gate] has wrapped with the member: a bootstrap that
// runs replicas active refuses to start when none is, since nothing would keep two
// replicas off one object.
func (m *Member) Gated() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gated
}

// Identity is the member's name in the ring.
func (m *Member) Identity() string { return m.opts.Identity }

// Active is the ranges whose passes the member admits now: those it holds and the ring
// still assigns it, while its Lease is fresh. It is empty before the first renewal.
func (m *Member) Active() Ranges {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.activeLocked(time.Now())
}

func (m *Member) activeLocked(now time.Time) Ranges {
	if !now.Before(m.fence) {
		return nil
	}
	return Intersect(m.held, m.target)
}

// Held is the ranges the member holds: [Member.Active] and those it still drains.
func (m *Member) Held() Ranges {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.held)
}

// Subscribe returns a channel that receives [Member.Active] whenever it changes (the
// latest value only: a slow reader misses intermediate ones). Call it before Run.
func (m *Member) Subscribe() <-chan Ranges {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch := make(chan Ranges, 1)
	m.listeners = append(m.listeners, ch)
	return ch
}

// Admit decides whether this replica runs a pass over the object of uid: ok when its
// hash lies in [Member.Active]. The pass then runs under the returned context, which
// ends when this replica can no longer be sure no other replica took the range over
// (its Lease's validity, as the others count it), and must call done when it ends: the
// member hands a range over only once every pass admitted in it is done.
func (m *Member) Admit(ctx context.Context, uid types.UID) (passCtx context.Context, done func(), ok bool) {
	h := Hash(uid)
	m.mu.Lock()
	now := time.Now()
	if !m.activeLocked(now).Contains(h) {
		m.mu.Unlock()
		return ctx, func() {}, false
	}
	m.inFlight[h]++
	fence := m.fence
	m.mu.Unlock()
	passCtx, cancel := context.WithDeadline(ctx, fence)
	var once sync.Once
	return passCtx, func() {
		once.Do(func() {
			cancel()
			m.mu.Lock()
			if m.inFlight[h]--; m.inFlight[h] == 0 {
				delete(m.inFlight, h)
			}
			close(m.drained)
			m.drained = make(chan struct{})
			m.mu.Unlock()
		})
	}, true
}

// busyLocked reports whether a pass admitted in rs is still running.
func (m *Member) busyLocked(rs Ranges) bool {
	for h := range m.inFlight {
		if rs.Contains(h) {
			return true
		}
	}
	return false
}

// Run renews the member's Lease and follows the ring every RenewPeriod until ctx ends;
// then it stops admitting passes, waits (up to LeaseDuration) for the admitted ones to
// end, and releases its Lease (no holder, nothing held) so that the others take its
// ranges over at their next round. A failed
// renewal or read is retried at the next period; the member keeps admitting passes only
// while its last renewal is fresh.
func (m *Member) Run(ctx context.Context) error {
	logger := log.FromContext(ctx).WithValues("ring", m.opts.Ring, "member", m.opts.Identity)
	ticker := time.NewTicker(m.opts.RenewPeriod)
	defer ticker.Stop()
	for {
		if err := m.tick(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "shard ring round failed; retrying")
		}
		select {
		case <-ctx.Done():
			return m.leave(context.WithoutCancel(ctx))
		case <-ticker.C:
		}
	}
}

// leave stops admitting passes, waits for the admitted ones, and releases the Lease.
func (m *Member) leave(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, m.opts.LeaseDuration)
	defer cancel()
	m.mu.Lock()
	m.target = nil // admits nothing more
	for len(m.inFlight) > 0 {
		wait := m.drained
		m.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return fmt.Errorf("shard: leaving ring %s: passes still running: %w", m.opts.Ring, ctx.Err())
		}
		m.mu.Lock()
	}
	m.held, m.claimed, m.released = nil, nil, true
	had := m.lease != nil
	m.mu.Unlock()
	m.notify()
	if !had {
		return nil
	}
	return m.renew(ctx)
}

// tick is one round: renew, read the ring, release, confirm and claim; when it claimed
// something new it reads the ring once more to confirm at once.
func (m *Member) tick(ctx context.Context) error {
	for range 2 {
		claimedMore, err := m.round(ctx)
		if err != nil || !claimedMore {
			return err
		}
	}
	return nil
}

// round renews the Lease (writing what it holds and claims), lists the ring's Leases
// and moves ranges: see the package documentation.
func (m *Member) round(ctx context.Context) (claimedMore bool, err error) {
	start := time.Now()
	m.mu.Lock()
	if !m.fence.IsZero() && !start.Before(m.fence) {
		// Not renewed in time: the others may count this member gone and take its ranges
		// over, so it starts again from nothing rather than resume them.
		m.held, m.claimed, m.target = nil, nil, nil
	}
	m.mu.Unlock()
	if err := m.renew(ctx); err != nil {
		return false, err
	}
	var leases coordinationv1.LeaseList
	if err := m.c.List(ctx, &leases, client.InNamespace(m.opts.Namespace), client.MatchingLabels{LabelRing: m.opts.Ring}); err != nil {
		return false, fmt.Errorf("shard: listing the Leases of ring %s: %w", m.opts.Ring, err)
	}
	now := time.Now()
	live := []string{m.opts.Identity}
	var occupied Ranges          // what the other live members hold or claim
	lower := map[string]Ranges{} // the claims of live members named before this one
	seen := map[string]bool{}
	for i := range leases.Items {
		l := &leases.Items[i]
		if l.Name == m.name {
			continue
		}
		seen[l.Name] = true
		released := l.Spec.HolderIdentity == nil // its member left: it holds nothing
		var held, claimed Ranges
		if !released {
			var err1, err2 error
			held, err1 = ParseRanges(l.Annotations[AnnotationHeld])
			claimed, err2 = ParseRanges(l.Annotations[AnnotationClaimed])
			if err := errors.Join(err1, err2); err != nil {
				return false, fmt.Errorf("shard: Lease %s/%s: %w", l.Namespace, l.Name, err)
			}
		}
		o, ok := m.observed[l.Name]
		if !ok || o.resourceVersion != l.ResourceVersion {
			o = observation{resourceVersion: l.ResourceVersion, at: now, occupied: Union(held, claimed)}
			m.observed[l.Name] = o
		}
		if released {
			m.collect(ctx, l, now.Sub(o.at))
			continue
		}
		if now.Sub(o.at) >= m.opts.LeaseDuration {
			m.collect(ctx, l, now.Sub(o.at))
			continue // expired: it has stopped admitting passes
		}
		live = append(live, *l.Spec.HolderIdentity)
		occupied = Union(occupied, Union(held, claimed))
		if *l.Spec.HolderIdentity < m.opts.Identity {
			lower[l.Name] = claimed
		}
	}
	// A Lease gone from the list (deleted by someone else) occupies the whole space for
	// a Lease duration from the first list that missed it: its member may have claimed
	// and confirmed more since this member last read its Lease, and keeps passing over
	// what it holds until its fence, so nothing is claimed or confirmed meanwhile. Its
	// member writes the Lease again at its next renewal, which ends the wait. A member
	// leaving releases its Lease instead (no holder, nothing held), so its ranges are
	// free at once.
	for name, o := range m.observed {
		if seen[name] {
			continue
		}
		if o.vanished.IsZero() {
			o.vanished = now
			m.observed[name] = o
		}
		if now.Sub(o.vanished) < m.opts.LeaseDuration {
			occupied = Full()
		} else {
			delete(m.observed, name)
		}
	}

	m.mu.Lock()
	target := Assign(live, m.opts.VirtualNodes)[m.opts.Identity]
	m.fence = start.Add(m.opts.LeaseDuration - m.opts.RenewPeriod)
	m.target = target
	before := [2]string{m.held.String(), m.claimed.String()}
	// Release what the ring no longer assigns once its passes are done.
	leaving := Subtract(m.held, target)
	for _, r := range leaving {
		if !m.busyLocked(Ranges{r}) {
			m.held = Subtract(m.held, Ranges{r})
		}
	}
	// Confirm the claims the Lease showed before this read where no other live member
	// holds or claims; on a collision the member named first keeps its claim.
	written := Intersect(m.written, target)
	m.held = Union(m.held, Subtract(written, occupied))
	keep := Subtract(Intersect(m.claimed, target), m.held)
	for _, claims := range lower {
		keep = Subtract(keep, claims)
	}
	// Claim what the ring assigns and nobody occupies.
	fresh := Subtract(Subtract(Subtract(target, m.held), keep), occupied)
	m.claimed = Union(keep, fresh)
	changed := before != [2]string{m.held.String(), m.claimed.String()}
	m.mu.Unlock()
	m.notify()
	if changed {
		if err := m.renew(ctx); err != nil {
			return false, err
		}
	}
	return len(fresh) > 0, nil
}

// collect deletes the Lease of a member gone (or left) for ten Lease durations, so that
// replicas replaced under new names do not leave Leases behind. Its UID and resourceVersion are
// preconditions: a member that came back meanwhile keeps its Lease.
func (m *Member) collect(ctx context.Context, l *coordinationv1.Lease, gone time.Duration) {
	if gone < 10*m.opts.LeaseDuration {
		return
	}
	err := m.c.Delete(ctx, l, client.Preconditions{UID: &l.UID, ResourceVersion: &l.ResourceVersion})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		log.FromContext(ctx).Error(err, "deleting the Lease of a departed shard member", "lease", l.Name)
	}
}

// renew writes the member's Lease: its renewal time, what it holds and what it claims.
// The claims it writes are the ones the next read of the ring may confirm.
func (m *Member) renew(ctx context.Context) error {
	m.mu.Lock()
	held, claimed, lease, released := m.held, m.claimed, m.lease, m.released
	m.mu.Unlock()
	if lease == nil {
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: m.opts.Namespace, Name: m.name}}
		err := m.c.Get(ctx, client.ObjectKeyFromObject(lease), lease)
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("shard: reading Lease %s/%s: %w", m.opts.Namespace, m.name, err)
		}
	}
	next := lease.DeepCopy()
	next.Labels = maps.Clone(next.Labels)
	if next.Labels == nil {
		next.Labels = map[string]string{}
	}
	next.Labels[LabelRing] = m.opts.Ring
	next.Annotations = maps.Clone(next.Annotations)
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	next.Annotations[AnnotationHeld], next.Annotations[AnnotationClaimed] = held.String(), claimed.String()
	next.Spec.HolderIdentity = ptr.To(m.opts.Identity)
	if released {
		next.Spec.HolderIdentity = nil
	}
	next.Spec.LeaseDurationSeconds = ptr.To(int32((m.opts.LeaseDuration + time.Second - 1) / time.Second))
	next.Spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Now()))
	var err error
	if next.ResourceVersion == "" {
		err = m.c.Create(ctx, next)
	} else {
		err = m.c.Update(ctx, next)
	}
	if err != nil {
		m.mu.Lock()
		m.lease = nil // read it again next time
		if apierrors.IsNotFound(err) {
			// Someone deleted the Lease: the others may count this member gone, so it
			// starts again from nothing.
			m.held, m.claimed, m.target = nil, nil, nil
		}
		m.mu.Unlock()
		m.notify()
		return fmt.Errorf("shard: renewing Lease %s/%s: %w", m.opts.Namespace, m.name, err)
	}
	m.mu.Lock()
	m.lease, m.written = next, claimed
	m.mu.Unlock()
	return nil
}

// notify sends Active to the subscribers when it changed, and closes the watches the
// transports opened under the ranges before.
func (m *Member) notify() {
	m.mu.Lock()
	active := m.activeLocked(time.Now())
	if slices.Equal(active, m.lastSent) {
		m.mu.Unlock()
		return
	}
	m.lastSent = active
	m.gen++
	stale := slices.Collect(maps.Keys(m.open))
	clear(m.open)
	listeners := slices.Clone(m.listeners)
	m.mu.Unlock()
	// The watches opened under the old ranges end: their informers watch again, are
	// answered 410 Expired and list under the new ranges.
	for _, w := range stale {
		_ = w.ReadCloser.Close()
	}
	for _, ch := range listeners {
		select {
		case <-ch:
		default:
		}
		ch <- active
	}
}
