package reconcile

import "context"

// stateKey keys the pass state of type S in a context: one key per type, so states of
// different types never collide.
type stateKey[S any] struct{}

// WithState returns ctx carrying s, the state the steps of one pass hand to each other
// through [StateFrom] (a digest one step computes and a later one puts on a pod
// template). Call it before Pipeline.Run with a fresh *S, so nothing leaks into the next
// pass; what must outlive the pass belongs in the status or a child:
//
//	type passState struct{ configHash string }
//	res, err := pipeline.Run(reconcile.WithState(ctx, &passState{}), obj)
func WithState[S any](ctx context.Context, s *S) context.Context {
	return context.WithValue(ctx, stateKey[S]{}, s)
}

// StateFrom returns the *S that WithState put into ctx. Without one (a step run on its
// own, as in a step test) it returns a new zero S, so a step can always write to it.
// Parallel members share the one *S of the pass: a member writes only fields no other
// member reads or writes.
func StateFrom[S any](ctx context.Context) *S {
	if s, ok := ctx.Value(stateKey[S]{}).(*S); ok {
		return s
	}
	return new(S)
}
