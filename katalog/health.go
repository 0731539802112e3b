package katalog

import (
	"context"
	"fmt"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// CRDHealth is what the engine knows about one CRD entry's controller.
type CRDHealth struct {
	// CRD is the entry's short name.
	CRD string `json:"crd"`
	// Synced reports whether the informer of its custom resources has synced.
	Synced bool `json:"synced"`
	// Healthy reports Synced and that none of the last Window reconciles failed (a
	// reconcile that waits for a dependency or stops at a deny validation rule does not
	// count as failed: it did what the Katalog asks).
	Healthy bool `json:"healthy"`
	// Window is the number of most recent reconciles Healthy looks at.
	Window int `json:"window"`
	// Reconciles counts the finished reconciles since the engine started.
	Reconciles int64 `json:"reconciles"`
	// Failures counts those that failed.
	Failures int64 `json:"failures"`
	// LastError is the error of the most recent failed reconcile, "" when none failed.
	LastError string `json:"lastError,omitempty"`
	// LastReconcile is when the most recent reconcile finished; zero before the first.
	LastReconcile time.Time `json:"lastReconcile,omitzero"`
	// WaitingFor names the dependsOn targets that have not reached their state, sorted.
	WaitingFor []string `json:"waitingFor,omitempty"`
	// Workers is the number of concurrent reconciles.
	Workers int `json:"workers"`
}

// health records the outcomes of one CRD's reconciles.
type health struct {
	mu         sync.Mutex
	window     int
	recent     []bool // true: failed; the last window outcomes, oldest first
	reconciles int64
	failures   int64
	lastError  string
	last       time.Time
}

func newHealth(window int) *health { return &health{window: window} }

func (h *health) record(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reconciles++
	h.last = time.Now()
	h.recent = append(h.recent, err != nil)
	if len(h.recent) > h.window {
		h.recent = h.recent[len(h.recent)-h.window:]
	}
	if err != nil {
		h.failures++
		h.lastError = err.Error()
	}
}

// Health returns the health of the CRD entry called crd, or an error wrapping
// ErrUnknownCRD. It makes no API request: the sync state is the manager cache's.
func (e *Engine) Health(crd string) (CRDHealth, error) {
	c, ok := e.crds[crd]
	if !ok {
		return CRDHealth{}, fmt.Errorf("%w %q", ErrUnknownCRD, crd)
	}
	h := e.health[crd]
	out := CRDHealth{CRD: crd, Synced: e.synced(c), Workers: c.WorkerCount(), WaitingFor: e.waitingFor(c)}
	h.mu.Lock()
	out.Window = h.window
	out.Reconciles, out.Failures, out.LastError, out.LastReconcile = h.reconciles, h.failures, h.lastError, h.last
	failed := false
	for _, f := range h.recent {
		failed = failed || f
	}
	h.mu.Unlock()
	out.Healthy = out.Synced && !failed
	return out, nil
}

// Healthy reports whether the CRD entry called crd is healthy (see CRDHealth.Healthy);
// false for an unknown name.
func (e *Engine) Healthy(crd string) bool {
	h, err := e.Health(crd)
	return err == nil && h.Healthy
}

// Synced reports whether the informer of crd's custom resources has synced; false for an
// unknown name.
func (e *Engine) Synced(crd string) bool {
	c, ok := e.crds[crd]
	return ok && e.synced(c)
}

func (e *Engine) synced(c *CRD) bool {
	inf, err := e.mgr.GetCache().GetInformer(context.Background(), newCR(c), cache.BlockUntilSynced(false))
	return err == nil && inf.HasSynced()
}

// dependencyMet reports whether the dependsOn target dep has reached cond.
func (e *Engine) dependencyMet(dep string, cond DependencyCondition) bool {
	if cond == DependencySynced {
		return e.Synced(dep)
	}
	return e.Healthy(dep)
}

// waitingFor returns the dependsOn targets of c that have not reached their state, sorted.
func (e *Engine) waitingFor(c *CRD) []string {
	var out []string
	for _, dep := range sortedKeys(c.DependsOn) {
		if !e.dependencyMet(dep, c.DependsOn[dep]) {
			out = append(out, dep)
		}
	}
	return out
}
