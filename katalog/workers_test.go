package katalog

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// workersKatalog has a Gadget CRD with workers and resync set by the test, whose every
// pass calls spec.url.
const workersKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: workers}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      workers: %d
      resync: %s
      operatorBox:
        onReconcile:
          external:
            - {name: call, url: "{{ .spec.url }}", expectedStatus: 200, timeout: 30s}
`

// barrier answers each request once n requests are in flight at the same time (or after
// wait), and records the most that ever were.
type barrier struct {
	n        int
	wait     time.Duration
	mu       sync.Mutex
	inFlight int
	most     int
	release  chan struct{}
}

func (b *barrier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.inFlight++
	b.most = max(b.most, b.inFlight)
	if b.inFlight == b.n {
		close(b.release)
	}
	release := b.release
	b.mu.Unlock()
	select {
	case <-release:
	case <-time.After(b.wait):
	case <-r.Context().Done():
	}
	b.mu.Lock()
	b.inFlight--
	b.mu.Unlock()
}

// TestWorkersRunConcurrently: a CRD with workers: 3 reconciles three custom resources at
// once (their passes meet in one external call held until all three are in flight); with
// workers: 1 the passes run one at a time.
func TestWorkersRunConcurrently(t *testing.T) {
	for _, workers := range []int{3, 1} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			ns := env.Namespace(t)
			b := &barrier{n: 3, wait: 2 * time.Second, release: make(chan struct{})}
			srv := httptest.NewServer(b)
			t.Cleanup(srv.Close)
			k := mustParse(t, "workers.yaml", fmt.Sprintf(workersKatalog, workers, "1h"))
			if got := k.Spec.CRDs["gadget"].WorkerCount(); got != workers {
				t.Fatalf("WorkerCount = %d, want %d", got, workers)
			}
			startEngine(t, []*Katalog{k}, testOptions(), ns)
			var gadgets []string
			for i := range 3 {
				g := newObject("Gadget", ns, fmt.Sprintf("g%d", i), map[string]any{"url": srv.URL})
				create(t, g)
				gadgets = append(gadgets, g.GetName())
			}
			for _, name := range gadgets {
				waitReady(t, newObject("Gadget", ns, name, nil), metav1.ConditionTrue, ReasonReconciled)
			}
			b.mu.Lock()
			most := b.most
			b.mu.Unlock()
			if most != workers {
				t.Errorf("at most %d passes were in flight at once, want workers = %d", most, workers)
			}
		})
	}
}

// TestResyncReconcilesAgain: a converged custom resource is reconciled again every
// resync, with no change and no event (its external call is made again).
func TestResyncReconcilesAgain(t *testing.T) {
	ns := env.Namespace(t)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls.Add(1) }))
	t.Cleanup(srv.Close)
	startEngine(t, []*Katalog{mustParse(t, "resync.yaml", fmt.Sprintf(workersKatalog, 1, "500ms"))}, testOptions(), ns)
	g := newObject("Gadget", ns, "g", map[string]any{"url": srv.URL})
	create(t, g)
	waitReady(t, g, metav1.ConditionTrue, ReasonReconciled)
	from := calls.Load()
	eventually(t, "three more passes", func(context.Context) error {
		if n := calls.Load() - from; n < 3 {
			return fmt.Errorf("%d passes since Ready", n)
		}
		return nil
	})
}
