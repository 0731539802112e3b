package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	. "github.com/c5c3/reconciler-sdk/shard"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// fast are the options of the tests' members: a 4 s Lease renewed every 500 ms.
func fast(ns, identity string) Options {
	o := DefaultOptions(ns, "ring")
	o.Identity, o.LeaseDuration, o.RenewPeriod = identity, 4*time.Second, 500*time.Millisecond
	return o
}

// severable is a client whose every call fails once cut: a replica cut off from the API
// server, or killed (it cannot delete its Lease on the way out).
type severable struct {
	client.Client
	cut atomic.Bool
}

var errCut = errors.New("cut off from the API server")

func (s *severable) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if s.cut.Load() {
		return errCut
	}
	return s.Client.Get(ctx, key, obj, opts...)
}

func (s *severable) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if s.cut.Load() {
		return errCut
	}
	return s.Client.List(ctx, list, opts...)
}

func (s *severable) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if s.cut.Load() {
		return errCut
	}
	return s.Client.Create(ctx, obj, opts...)
}

func (s *severable) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if s.cut.Load() {
		return errCut
	}
	return s.Client.Update(ctx, obj, opts...)
}

func (s *severable) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if s.cut.Load() {
		return errCut
	}
	return s.Client.Delete(ctx, obj, opts...)
}

// replica is a running member.
type replica struct {
	*Member
	client *severable
	stop   context.CancelFunc
	done   chan struct{} // closed when Run returned, with err
	err    error
}

// kill cuts the replica off and stops it: its Lease stays until it expires.
func (r *replica) kill() { r.client.cut.Store(true); r.stop(); <-r.done }

// leave stops the replica gracefully and returns Run's error.
func (r *replica) leave() error { r.stop(); <-r.done; return r.err }

// start runs a member of the tests' ring named identity until the test ends.
func start(t *testing.T, ns, identity string) *replica {
	t.Helper()
	c := &severable{Client: env.Client}
	m, err := NewMember(c, fast(ns, identity))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{Member: m, client: c, stop: cancel, done: make(chan struct{})}
	go func() { r.err = m.Run(ctx); close(r.done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(time.Minute): // Run's drain is bounded by LeaseDuration; not an assertion
		}
	})
	return r
}

// overlapWatch takes atomic snapshots of what the replicas hold, every few
// milliseconds, until the test ends, and fails it when two held the same hash at once.
func overlapWatch(t *testing.T, replicas *[]*replica, mu *sync.Mutex) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			mu.Lock()
			rs := append([]*replica{}, *replicas...)
			mu.Unlock()
			members := make([]*Member, len(rs))
			for i, r := range rs {
				members[i] = r.Member
			}
			var union Ranges
			var clash string
			for i, held := range SnapshotHeld(members) {
				if both := Intersect(union, held); len(both) > 0 && clash == "" {
					clash = fmt.Sprintf("%s holds %v, held by another at the same time", rs[i].Identity(), both)
				}
				union = Union(union, held)
			}
			if clash != "" {
				t.Error(clash)
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// expectSplit waits until the replicas' active ranges are the ring's split among them.
func expectSplit(t *testing.T, within time.Duration, rs ...*replica) {
	t.Helper()
	var names []string
	for _, r := range rs {
		names = append(names, r.Identity())
	}
	want := Assign(names, 0)
	began := time.Now()
	defer func() {
		t.Logf("split among %s after %s", strings.Join(names, ", "), time.Since(began).Round(time.Millisecond))
	}()
	testenv.Eventually(t, within, "the ring split among "+strings.Join(names, ", "), func(context.Context) (bool, error) {
		for _, r := range rs {
			if !cmp.Equal(want[r.Identity()], r.Active()) {
				return false, nil
			}
		}
		return true, nil
	})
}

// Three replicas split the space as the ring assigns it; a killed replica (its Lease
// left to expire) loses its ranges to the others within two Lease durations; a fourth
// joining takes its share; a replica stopping gracefully deletes its Lease and the
// others take over at once. At no instant do two replicas hold the same hash.
func TestRingHandOver(t *testing.T) {
	ns := env.Namespace(t)
	var mu sync.Mutex
	var replicas []*replica
	add := func(r *replica) *replica {
		mu.Lock()
		defer mu.Unlock()
		replicas = append(replicas, r)
		return r
	}
	overlapWatch(t, &replicas, &mu)
	a, b, c := add(start(t, ns, "a")), add(start(t, ns, "b")), add(start(t, ns, "c"))
	expectSplit(t, time.Minute, a, b, c)

	lease := fast(ns, "").LeaseDuration
	killed := time.Now()
	c.kill()
	expectSplit(t, 2*lease, a, b) // the bound of the protocol: expiry, then a claim confirmed
	t.Logf("a killed replica's ranges were taken over after %s (Lease duration %s)", time.Since(killed).Round(time.Millisecond), lease)

	d := add(start(t, ns, "d"))
	expectSplit(t, time.Minute, a, b, d)

	if err := a.leave(); err != nil {
		t.Fatalf("a graceful stop: %v", err)
	}
	released := &coordinationv1.Lease{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "ring-a"}, released); err != nil ||
		released.Spec.HolderIdentity != nil || released.Annotations[AnnotationHeld] != "" {
		t.Errorf("Lease of a stopped replica: %v, holder %v, held %q; want it released", err, released.Spec.HolderIdentity, released.Annotations[AnnotationHeld])
	}
	expectSplit(t, lease, b, d)
}

// uidIn returns a UID whose hash lies in rs.
func uidIn(t *testing.T, rs Ranges) types.UID {
	t.Helper()
	for range 100000 {
		if uid := uuid.NewUUID(); rs.Owns(uid) {
			return uid
		}
	}
	t.Fatalf("no UID in %v", rs)
	return ""
}

// A range is handed over only once the passes admitted in it are done: while a pass of
// the first replica runs over an object the ring now assigns to the second, the first
// admits no new pass over it and the second does not take it; once the pass is done,
// the second does.
func TestAdmitDrainsBeforeHandOver(t *testing.T) {
	ns := env.Namespace(t)
	a := start(t, ns, "a")
	expectSplit(t, time.Minute, a)
	uid := uidIn(t, Assign([]string{"a", "b"}, 0)["b"])
	ctx, done, ok := a.Admit(t.Context(), uid)
	if !ok {
		t.Fatal("the only replica refused a pass")
	}
	b := start(t, ns, "b")
	testenv.Eventually(t, time.Minute, "b active", func(context.Context) (bool, error) { return len(b.Active()) > 0, nil })
	for range 6 { // three renewal periods: long enough for a hand-off that would not wait
		if b.Active().Owns(uid) {
			t.Fatal("b took the range of a pass a still runs")
		}
		if _, d, ok := a.Admit(t.Context(), uid); ok {
			d()
			t.Fatal("a admitted a new pass in a range it hands over")
		}
		time.Sleep(250 * time.Millisecond)
	}
	if ctx.Err() != nil {
		t.Fatalf("the running pass's context ended: %v", ctx.Err())
	}
	done()
	expectSplit(t, time.Minute, a, b)
}

// A replica that cannot renew its Lease stops admitting passes before the others may
// count it gone (the running pass's context ends then too), and once it reaches the API
// server again it starts over: it holds nothing, and claims its share anew.
func TestFencing(t *testing.T) {
	ns := env.Namespace(t)
	a := start(t, ns, "a")
	expectSplit(t, time.Minute, a)
	ctx, done, ok := a.Admit(t.Context(), "some-uid")
	if !ok {
		t.Fatal("the only replica refused a pass")
	}
	defer done()
	deadline, _ := ctx.Deadline()
	if lease := fast(ns, "").LeaseDuration; time.Until(deadline) > lease {
		t.Errorf("a pass may run until %s, beyond the Lease's validity", time.Until(deadline))
	}
	a.client.cut.Store(true)
	testenv.Eventually(t, time.Minute, "a fenced", func(context.Context) (bool, error) { return len(a.Active()) == 0, nil })
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute): // bounded by the fence; not an assertion
		t.Fatal("the pass's context outlived the fence")
	}
	a.client.cut.Store(false)
	expectSplit(t, time.Minute, a)
}

// A failed call of each verb the member makes stops its round (or its release on the way
// out) with an error naming the Lease or the ring, wrapping the cause; the next round
// succeeds.
func TestRoundFaults(t *testing.T) {
	tests := map[string]struct {
		verb    faults.Verb
		made    bool // the Lease exists before the fault: the renewal updates it
		leaving bool
	}{
		"read":    {verb: faults.VerbGet},
		"create":  {verb: faults.VerbCreate},
		"list":    {verb: faults.VerbList},
		"renew":   {verb: faults.VerbUpdate, made: true},
		"release": {verb: faults.VerbUpdate, made: true, leaving: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			inj := faults.NewInjector()
			m, err := NewMember(inj.Client(env.Client), fast(ns, "a"))
			if err != nil {
				t.Fatal(err)
			}
			if tc.made {
				if err := m.Tick(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			inj.Arm(tc.verb, 1, faults.Internal)
			if tc.leaving {
				err = m.Leave(t.Context())
			} else {
				err = m.Tick(t.Context())
			}
			if !inj.Fired() || !errors.Is(err, faults.ErrInjected) || !strings.Contains(err.Error(), "ring-a") && !strings.Contains(err.Error(), "ring ring") {
				t.Fatalf("%s failing: %v, want an error naming the Lease or ring and wrapping the fault", tc.verb, err)
			}
			if tc.leaving {
				return
			}
			for range 2 {
				if err := m.Tick(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(Full(), m.Active()); diff != "" {
				t.Errorf("after the fault: active -want, +got:\n%s", diff)
			}
		})
	}
}

// NewMember refuses options that cannot work, naming the field.
func TestNewMemberOptions(t *testing.T) {
	good := fast("ns", "a")
	tests := map[string]struct {
		edit func(*Options)
		want string
	}{
		"no namespace": {func(o *Options) { o.Namespace = "" }, "Namespace"},
		"bad ring":     {func(o *Options) { o.Ring = "Ring_1" }, "Ring"},
		"bad identity": {func(o *Options) { o.Identity = "a/b" }, "Identity"},
		"slow renewal": {func(o *Options) { o.RenewPeriod = 2 * time.Second }, "RenewPeriod"},
	}
	for name, tc := range tests {
		o := good
		tc.edit(&o)
		_, err := NewMember(env.Client, o)
		if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrInvalidOptions naming %s", name, err, tc.want)
		}
	}
	if _, err := NewMember(nil, good); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("nil client: %v, want ErrInvalidOptions", err)
	}
}

// The Lease of a member gone for ten Lease durations is deleted; a Lease of another
// ring, as old, is left alone.
func TestDepartedLeasesAreCollected(t *testing.T) {
	ns := env.Namespace(t)
	ghost := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ring-ghost", Labels: map[string]string{LabelRing: "ring"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("ghost")}}
	other := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other-ghost", Labels: map[string]string{LabelRing: "other"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("ghost")}}
	for _, l := range []*coordinationv1.Lease{ghost, other} {
		if err := env.Client.Create(t.Context(), l); err != nil {
			t.Fatal(err)
		}
	}
	o := fast(ns, "a")
	o.LeaseDuration, o.RenewPeriod = time.Second, 250*time.Millisecond
	m, err := NewMember(env.Client, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	testenv.Eventually(t, time.Minute, "the departed member's Lease deleted", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(ghost), &coordinationv1.Lease{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(other), &coordinationv1.Lease{}); err != nil {
		t.Errorf("the other ring's Lease: %v, want it kept", err)
	}
}

// A member's Lease deleted under it (by someone else) does not let another replica take
// its ranges while it may still pass over them: the others keep them occupied until the
// Lease would have expired, the member drops them at its next renewal, and the ring
// then splits as before. At no instant do two replicas hold the same hash.
func TestLeaseDeletedUnderAMember(t *testing.T) {
	ns := env.Namespace(t)
	var mu sync.Mutex
	var replicas []*replica
	overlapWatch(t, &replicas, &mu)
	a, b := start(t, ns, "a"), start(t, ns, "b")
	mu.Lock()
	replicas = append(replicas, a, b)
	mu.Unlock()
	expectSplit(t, time.Minute, a, b)
	lease := &coordinationv1.Lease{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "ring-a"}, lease); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "a's Lease made again", func(ctx context.Context) (bool, error) {
		again := &coordinationv1.Lease{}
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(lease), again)
		return err == nil && again.UID != lease.UID, client.IgnoreNotFound(err)
	})
	expectSplit(t, time.Minute, a, b)
}

// A Lease deleted after the others last read it may hide ranges its member confirmed
// since: while it is missing the others claim nothing, so they never take what its
// member still holds. The rounds run by hand, in the order that exposes it: b reads a
// holding nothing, a confirms its share, a's Lease is deleted, b reads again.
func TestDeletedLeaseHidesNothing(t *testing.T) {
	ns := env.Namespace(t)
	member := func(identity string) *Member {
		m, err := NewMember(env.Client, fast(ns, identity))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b := member("a"), member("b")
	tick := func(m *Member) {
		t.Helper()
		if err := m.Tick(t.Context()); err != nil {
			t.Fatalf("%s: %v", m.Identity(), err)
		}
	}
	disjoint := func(when string) {
		t.Helper()
		if both := Intersect(a.Held(), b.Held()); len(both) > 0 {
			t.Fatalf("%s: a and b both hold %v", when, both)
		}
	}
	want := Assign([]string{"a", "b"}, 0)
	tick(b) // alone: b holds everything
	tick(a) // a sees b holding everything: it claims nothing
	tick(b) // b releases a's share; it last read a's Lease holding nothing
	tick(a) // a claims and confirms its share
	if !cmp.Equal(a.Held(), want["a"]) || !cmp.Equal(b.Held(), want["b"]) {
		t.Fatalf("before the deletion a holds %v, b holds %v, want the ring's split", a.Held(), b.Held())
	}
	lease := &coordinationv1.Lease{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "ring-a"}, lease); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	tick(b)
	disjoint("b's first round without a's Lease")
	if err := a.Tick(t.Context()); err == nil { // a's renewal finds its Lease gone
		t.Error("a's renewal of its deleted Lease succeeded")
	}
	disjoint("a's renewal after the deletion")
	tick(a) // a writes its Lease again, still holding its share
	tick(b)
	disjoint("b's round after a's Lease is back")
	if !cmp.Equal(a.Held(), want["a"]) || !cmp.Equal(b.Held(), want["b"]) {
		t.Errorf("after a's Lease is back a holds %v, b holds %v, want the ring's split", a.Held(), b.Held())
	}
}
