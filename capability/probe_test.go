package capability_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/c5c3/reconciler-sdk/capability"
)

// fakeClock is a settable clock for TTL tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// countingMapper counts RESTMapping calls and answers with a configurable error.
type countingMapper struct {
	meta.RESTMapper
	mu    sync.Mutex
	calls int
	err   error
}

func (m *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.err != nil {
		return nil, m.err
	}
	return &meta.RESTMapping{GroupVersionKind: gk.WithVersion(versions[0])}, nil
}

func (m *countingMapper) set(err error) { m.mu.Lock(); defer m.mu.Unlock(); m.err = err; m.calls = 0 }
func (m *countingMapper) n() int        { m.mu.Lock(); defer m.mu.Unlock(); return m.calls }

func TestProbeCachesNotServedOnEnvtest(t *testing.T) {
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	probe, err := capability.NewProbe(c.RESTMapper(), capability.ProbeOptions{NegativeTTL: 30 * time.Second, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	// Warm the mapper: the first probe of any kind runs the initial discovery.
	if served, err := probe.IsKindServed(httpRouteGVK); err != nil || !served {
		t.Fatalf("HTTPRoute: (%v, %v), want (true, nil)", served, err)
	}

	group := madeUpGroup()
	gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"}
	counter.Reset()
	if served, err := probe.IsKindServed(gvk); err != nil || served {
		t.Fatalf("missing kind: (%v, %v), want (false, nil)", served, err)
	}
	if counter.Total() == 0 {
		t.Fatal("first probe of a missing kind sent no discovery request")
	}

	counter.Reset()
	if served, err := probe.IsKindServed(gvk); err != nil || served {
		t.Fatalf("cached: (%v, %v), want (false, nil)", served, err)
	}
	if n := counter.Total(); n != 0 {
		t.Errorf("cached verdict sent %d requests, want 0", n)
	}

	installWidgetCRD(t, group)
	// Within the TTL the stale verdict stands: that is the trade-off of the cache. Right
	// after the CRD is Established discovery may not list its group yet, so "false" alone
	// does not prove the answer came from the cache: no request may have been sent.
	clock.Step(29 * time.Second)
	counter.Reset()
	if served, err := probe.IsKindServed(gvk); err != nil || served {
		t.Fatalf("within TTL after the CRD was installed: (%v, %v), want the cached (false, nil)", served, err)
	}
	if n := counter.Total(); n != 0 {
		t.Fatalf("verdict within the TTL sent %d requests, want 0: it was refreshed before the TTL expired or Forget was called", n)
	}
	// Forget makes the next probe ask again and notice the CRD.
	probe.Forget(gvk)
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { probe.Forget(gvk); return probe.IsKindServed(gvk) })
	if err != nil {
		t.Fatalf("installed CRD never reported after Forget: %v", err)
	}
}

func TestProbeNegativeTTL(t *testing.T) {
	notServed := &meta.NoKindMatchError{GroupKind: vpaGVK.GroupKind(), SearchedVersions: []string{"v1"}}
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	m := &countingMapper{}
	probe, err := capability.NewProbe(m, capability.ProbeOptions{NegativeTTL: 30 * time.Second, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	probeWant := func(step string, wantServed bool, wantCalls int) {
		t.Helper()
		m.mu.Lock()
		m.calls = 0
		m.mu.Unlock()
		served, err := probe.IsKindServed(vpaGVK)
		if err != nil && !errors.Is(err, capability.ErrProbeFailed) {
			t.Fatalf("%s: unexpected error %v", step, err)
		}
		if served != wantServed || m.n() != wantCalls {
			t.Errorf("%s: served=%v calls=%d, want served=%v calls=%d", step, served, m.n(), wantServed, wantCalls)
		}
	}

	m.set(notServed)
	probeWant("first miss asks", false, 1)
	probeWant("miss within TTL is cached", false, 0)
	clock.Step(30*time.Second - time.Nanosecond)
	probeWant("miss just before expiry is cached", false, 0)
	clock.Step(time.Nanosecond)
	probeWant("expired verdict asks again", false, 1)
	probeWant("re-cached", false, 0)

	m.set(nil)
	probe.Reset()
	probeWant("after Reset asks", true, 1)
	probeWant("served is not cached by the probe", true, 1)

	m.set(errors.New("connection refused"))
	probeWant("error asks", false, 1)
	probeWant("error is not cached", false, 1)

	// An error after a cached miss does not leave the stale miss behind.
	m.set(notServed)
	probeWant("miss", false, 1)
	clock.Step(31 * time.Second)
	m.set(errors.New("connection refused"))
	probeWant("expired miss then error", false, 1)
	m.set(nil)
	probeWant("served after error", true, 1)
}

func TestProbeZeroTTLDisablesCache(t *testing.T) {
	m := &countingMapper{err: &meta.NoKindMatchError{GroupKind: vpaGVK.GroupKind()}}
	probe, err := capability.NewProbe(m, capability.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if served, err := probe.IsKindServed(vpaGVK); err != nil || served {
			t.Fatalf("(%v, %v), want (false, nil)", served, err)
		}
	}
	if m.n() != 3 {
		t.Errorf("mapper asked %d times, want 3 (no negative cache)", m.n())
	}
}

func TestNewProbe(t *testing.T) {
	if _, err := capability.NewProbe(nil, capability.DefaultProbeOptions()); !errors.Is(err, capability.ErrNilMapper) {
		t.Errorf("nil mapper: err = %v, want ErrNilMapper", err)
	}
	if got := capability.DefaultProbeOptions().NegativeTTL; got != 30*time.Second {
		t.Errorf("default NegativeTTL = %v, want 30s", got)
	}
}

// blockingMapper answers "not served" once release is closed, after signalling entered.
type blockingMapper struct {
	meta.RESTMapper
	entered chan struct{}
	release chan struct{}
}

func (m *blockingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	m.entered <- struct{}{}
	<-m.release
	return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
}

// TestProbeForgetDuringProbe: a verdict the mapper gave while Forget (or Reset) ran is
// not cached, so the next probe asks again instead of answering the stale miss.
func TestProbeForgetDuringProbe(t *testing.T) {
	for name, drop := range map[string]func(*capability.Probe){
		"Forget": func(p *capability.Probe) { p.Forget(vpaGVK) },
		"Reset":  (*capability.Probe).Reset,
	} {
		t.Run(name, func(t *testing.T) {
			m := &blockingMapper{entered: make(chan struct{}, 1), release: make(chan struct{})}
			probe, err := capability.NewProbe(m, capability.DefaultProbeOptions())
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = probe.IsKindServed(vpaGVK)
			}()
			<-m.entered
			drop(probe)
			close(m.release)
			<-done

			m.release = make(chan struct{})
			close(m.release)
			if _, err := probe.IsKindServed(vpaGVK); err != nil {
				t.Fatal(err)
			}
			select {
			case <-m.entered:
			default:
				t.Errorf("the probe answered a miss cached across %s without asking the mapper", name)
			}
		})
	}
}
