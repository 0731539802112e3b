// Package faults injects API failures into a controller-runtime client and runs a
// scenario under every one of them.
//
// An [Injector] wraps a client, counts its calls per [Verb] (Get, List, Create, Update,
// Patch, Apply, Delete, Status().Update, Status().Patch) and fails exactly the armed
// call with a [Fault]: [Conflict] (409), [Internal] (500), [Timeout] (the write is
// served, then the caller sees context.DeadlineExceeded, as after a lost answer) or
// [Canceled] (context.Canceled, as during shutdown). Every injected error wraps
// [ErrInjected].
//
// A [Matrix] turns that into a suite: it runs a [Scenario] once without faults, counts
// its calls, then reruns it in a fresh world once per verb, call and fault, and asserts
// that the faulted pass reports the fault (an error or a requeue; a conflict may be
// absorbed by a retry), that no pass returns a result together with an error, that the
// scenario's invariants hold after every pass, and that the run converges to the state
// of the run that never failed:
//
//	faults.Matrix{Setup: func(t *testing.T) faults.Scenario {
//		ns := env.Namespace(t)
//		owner := newOwner(t, ns)
//		return faults.Scenario{
//			Client: env.Client,
//			Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
//				return ctrl.Result{}, apply.EnsureObject(ctx, c, env.Scheme, owner, desired(ns), apply.FieldManager)
//			},
//			Check: func(t *testing.T) { /* nothing lost, nothing regenerated */ },
//			State: func(t *testing.T) any { /* what the converged world looks like */ },
//		}
//	}}.Run(t)
//
// [Matrix.RunWritesAndReads] runs a smaller matrix: every write verb with every fault,
// and Get and List only with the faults a read can meet ([Reads]).
//
// The package does not import testenv; the worlds it runs in usually come from it (env
// above is a *testenv.Env, newOwner and desired the test's own fixtures). The old names
// in package testenv (FaultInjector, FaultMatrix, FaultRun, ...) are deprecated aliases
// of these.
package faults
