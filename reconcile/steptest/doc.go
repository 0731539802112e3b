// Package steptest tests one step of a reconcile pipeline without a control plane, from
// a table of cases in the style of reconciler.io/runtime's testing package.
//
// Each [Case] names the custom resource the step runs on and the other objects the API
// holds (GivenObjects), optionally intercepts client calls to inject API errors, and
// states what must come out: the step's result or error, the resource's conditions
// afterwards, and the objects that must (or must not) exist. [Suite.Run] runs every
// case as a subtest on controller-runtime's fake client, through a one-step
// reconcile.Pipeline, so the runner's rules hold as in production: an error wins over a
// result, a panic becomes an error wrapping reconcile.ErrPanic, and a Parallel group
// merges its members' conditions. Only the step runs: Ready is not re-aggregated and
// no status is written (that is reconcile.RunPass's job, tested on envtest), so expect
// the step's own conditions, not Ready.
//
// A case that cannot run — no Object, a nil scheme (an error wrapping
// apply.ErrNilScheme that names the object), objects the fake client refuses — fails
// with the reason in [Report].SetupErr and Problems; the kit never panics on it.
//
// The fake client does not run admission, defaulting or garbage collection; steps whose
// behaviour depends on the API server belong in an envtest suite as well.
package steptest
