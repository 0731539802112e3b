package katalog

import (
	"context"
	"fmt"
	"slices"
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
	// WaitingFor names the dependsOn targets that hold back this CRD's custom resources
	// in at least one namespace, sorted: a synced target whose cache has not synced, a
	// healthy target that has not synced or one of whose last Window reconciles in some
	// namespace failed (dependsOn is judged per namespace, see Engine.Health).
	WaitingFor []string `json:"waitingFor,omitempty"`
	// Workers is the number of concurrent reconciles.
	Workers int `json:"workers"`
}

// health records the outcomes of one CRD's reconciles.
type health struct {
	mu     sync.Mutex
	window int
	recent []bool // true: failed; the last window outcomes, oldest first
	// failing holds, per namespace, the last window outcomes of the reconciles in it,
	// for the namespaces where one of them failed only (the others are healthy), so that
	// it stays as small as the set of namespaces with a recent failure.
	failing    map[string][]bool
	reconciles int64
	failures   int64
	lastError  string
	last       time.Time
}

func newHealth(window int) *health { return &health{window: window, failing: map[string][]bool{}} }

// record notes the outcome of a reconcile of a custom resource in namespace.
func (h *health) record(namespace string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reconciles++
	h.last = time.Now()
	h.recent = h.appendOutcome(h.recent, err != nil)
	if ns := h.appendOutcome(h.failing[namespace], err != nil); slices.Contains(ns, true) {
		h.failing[namespace] = ns
	} else {
		delete(h.failing, namespace)
	}
	if err != nil {
		h.failures++
		h.lastError = err.Error()
	}
}

// appendOutcome appends failed to outcomes, keeping the last window of them.
func (h *health) appendOutcome(outcomes []bool, failed bool) []bool {
	outcomes = append(outcomes, failed)
	if len(outcomes) > h.window {
		outcomes = outcomes[len(outcomes)-h.window:]
	}
	return outcomes
}

// failedIn reports whether one of the last window reconciles in namespace failed; with
// namespace "*", in any namespace. Failures of cluster-scoped custom resources (namespace
// "") count for every namespace.
func (h *health) failedIn(namespace string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if namespace == anyNamespace {
		return len(h.failing) > 0
	}
	_, failed := h.failing[namespace]
	_, clusterFailed := h.failing[""]
	return failed || clusterFailed
}

// anyNamespace asks waitingFor about every namespace at once.
const anyNamespace = "*"

// Health returns the health of the CRD entry called crd, or an error wrapping
// ErrUnknownCRD. It makes no API request: the sync state is the manager cache's.
func (e *Engine) Health(crd string) (CRDHealth, error) {
	c, ok := e.crds[crd]
	if !ok {
		return CRDHealth{}, fmt.Errorf("%w %q", ErrUnknownCRD, crd)
	}
	h := e.health[crd]
	out := CRDHealth{CRD: crd, Synced: e.synced(c), Workers: c.WorkerCount(), WaitingFor: e.waitingFor(c, anyNamespace)}
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

// dependencyMet reports whether the dependsOn target dep has reached cond for the custom
// resources in namespace (anyNamespace: in every namespace). synced is the target's cache
// as a whole; healthy is synced and none of the last HealthWindow reconciles of the
// target's custom resources in namespace failed, so that a target failing in one
// namespace holds back the custom resources of that namespace only.
func (e *Engine) dependencyMet(dep string, cond DependencyCondition, namespace string) bool {
	if !e.Synced(dep) {
		return false
	}
	return cond == DependencySynced || !e.health[dep].failedIn(namespace)
}

// waitingFor returns the dependsOn targets of c that have not reached their state for the
// custom resources in namespace (anyNamespace: in some namespace), sorted.
func (e *Engine) waitingFor(c *CRD, namespace string) []string {
	var out []string
	for _, dep := range sortedKeys(c.DependsOn) {
		if !e.dependencyMet(dep, c.DependsOn[dep], namespace) {
			out = append(out, dep)
		}
	}
	return out
}
