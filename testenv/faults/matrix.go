package faults

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Matrix runs a scenario once without faults and then once per verb, per call of that
// verb the fault-free run made, and per fault: each run fails exactly one call. Every
// run must keep the scenario's invariants after every pass, surface the injected fault
// as an error or a requeue (unless MayAbsorb allows otherwise), never return a result
// together with an error, and converge, once the fault is gone, to the same State as
// the run that never failed.
type Matrix struct {
	// Setup builds a fresh world for one run (typically a new namespace and owner) and
	// returns what to run in it. Required.
	Setup func(t *testing.T) Scenario
	// Verbs to fail; nil means [Verbs].
	Verbs []Verb
	// Faults to inject; nil means [All].
	Faults []Fault
	// MaxPasses bounds the passes of one run until it converges; zero means 10.
	MaxPasses int
	// MayAbsorb reports whether a pass may answer a fault with neither an error nor a
	// requeue (it retried, or the failed call was a best-effort one). Nil means: only a
	// conflict may be absorbed, since retry-on-conflict is its proper answer.
	MayAbsorb func(Verb, Fault) bool
}

// Scenario is one run of a [Matrix]: the client, the pass and what to assert.
type Scenario struct {
	// Client is the client the faults are injected into (usually Env.Client). Required.
	Client client.Client
	// Pass runs one pass through c, the fault-injecting client. The run has converged
	// when a pass returns a zero result and no error. Required.
	Pass func(ctx context.Context, c client.Client) (ctrl.Result, error)
	// Check asserts the invariants that hold after every pass, faulted or not: nothing
	// deleted that should stay, no credential regenerated, the status written. Optional.
	Check func(t *testing.T)
	// State describes the converged world; it must be equal (cmp.Diff) to the State of
	// the run that never failed. Leave out what legitimately differs between runs
	// (namespaces, UIDs, timestamps, generated values). Optional.
	State func(t *testing.T) any
}

// Run runs the matrix as subtests named Verb/fault/call-N.
func (m Matrix) Run(t *testing.T) {
	t.Helper()
	if m.Setup == nil {
		t.Fatal("faults.Matrix: Setup is required")
	}
	verbs, fs := m.Verbs, m.Faults
	if verbs == nil {
		verbs = Verbs()
	}
	if fs == nil {
		fs = All()
	}
	absorb := m.MayAbsorb
	if absorb == nil {
		absorb = func(_ Verb, f Fault) bool { return f.Name == Conflict.Name }
	}
	maxPasses := m.MaxPasses
	if maxPasses == 0 {
		maxPasses = 10
	}

	calls := map[Verb]int{}
	var want any
	var wantSet bool
	t.Run("no-fault", func(t *testing.T) {
		inj := NewInjector()
		run := m.Setup(t)
		m.converge(t, inj, run, maxPasses, nil)
		for _, v := range verbs {
			calls[v] = inj.Calls(v)
		}
		if run.State != nil {
			want, wantSet = run.State(t), true
		}
	})
	if t.Failed() {
		return
	}
	for _, v := range verbs {
		for _, f := range fs {
			for n := 1; n <= calls[v]; n++ {
				t.Run(fmt.Sprintf("%s/%s/call-%d", v, f.Name, n), func(t *testing.T) {
					inj := NewInjector()
					run := m.Setup(t)
					inj.Arm(v, n, f)
					m.converge(t, inj, run, maxPasses+1, func(res ctrl.Result, err error) {
						if err == nil && res.IsZero() && !absorb(v, f) {
							t.Errorf("the pass that met the fault returned neither an error nor a requeue")
						}
					})
					if !inj.Fired() {
						t.Errorf("the fault never fired: the run made fewer than %d %s calls", n, v)
					}
					if wantSet {
						if diff := cmp.Diff(want, run.State(t)); diff != "" {
							t.Errorf("converged state differs from the fault-free run (-want +got):\n%s", diff)
						}
					}
				})
			}
		}
	}
}

// RunWritesAndReads runs the matrix in two smaller parts: the subtest "writes" fails
// every write verb of m.Verbs with every fault of m.Faults, the subtest "reads" fails
// Get and List (those of m.Verbs) with [Reads] only. Nil fields default as for Run.
func (m Matrix) RunWritesAndReads(t *testing.T) {
	t.Helper()
	verbs := m.Verbs
	if verbs == nil {
		verbs = Verbs()
	}
	writes, reads := m, m
	writes.Verbs, reads.Verbs = []Verb{}, []Verb{}
	for _, v := range verbs {
		if v.IsWrite() {
			writes.Verbs = append(writes.Verbs, v)
		} else {
			reads.Verbs = append(reads.Verbs, v)
		}
	}
	reads.Faults = Reads()
	t.Run("writes", writes.Run)
	t.Run("reads", reads.Run)
}

// converge runs passes until one returns a zero result and no error. onFault sees the
// answer of the pass during which the armed fault fired.
func (m Matrix) converge(t *testing.T, inj *Injector, run Scenario, maxPasses int,
	onFault func(ctrl.Result, error)) {
	t.Helper()
	if run.Client == nil || run.Pass == nil {
		t.Fatal("faults.Scenario: Client and Pass are required")
	}
	c := inj.Client(run.Client)
	for pass := 1; pass <= maxPasses; pass++ {
		firedBefore := inj.Fired()
		res, err := run.Pass(t.Context(), c)
		if err != nil && !res.IsZero() {
			t.Errorf("pass %d returned a result (%+v) together with an error: %v", pass, res, err)
		}
		if !firedBefore && inj.Fired() && onFault != nil {
			onFault(res, err)
			if err != nil && !errors.Is(err, ErrInjected) && !isContextErr(err) {
				t.Logf("pass %d answered the fault with a different error: %v", pass, err)
			}
		}
		if run.Check != nil {
			run.Check(t)
		}
		if err == nil && res.IsZero() {
			return
		}
	}
	t.Fatalf("no convergence within %d passes", maxPasses)
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
