package child

import (
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

// Sentinel errors for input the flows refuse before any API call.
var (
	// ErrKeyMismatch reports a desired child whose namespace or name differs from the
	// key the flow was called with.
	ErrKeyMismatch = errors.New("desired object does not match the child's key")
	// ErrInvalidSet reports a desired set that [ReconcileSet] cannot apply: a nil entry,
	// an entry without a name or outside the owner's namespace, or two entries with one
	// namespace/name.
	ErrInvalidSet = errors.New("invalid set of children")
)

// Reason is the reason and message of a condition, worded by the caller.
type Reason struct {
	// Reason is the condition's reason (CamelCase).
	Reason string
	// Message is the condition's message.
	Message string
}

// Optional describes one optional child of an owner for [Reconcile]: its key, whether
// it is wanted, and how the flow words its condition.
type Optional[O client.Object] struct {
	// Key names the child. An empty name or namespace on Desired is taken from it; a
	// different one is refused with [ErrKeyMismatch].
	Key client.ObjectKey
	// Desired is the wanted child, nil when the owner wants none. On return it holds
	// the server's copy, status included.
	Desired O
	// Type is the condition type of the outcome.
	Type string
	// Ready is the True reason of the default verdict (Verdict nil).
	Ready string
	// NotRequired is the True reason and message when Desired is nil.
	NotRequired Reason
	// Failed, when set, is the False reason of every error but a failed probe; empty:
	// an error comes with the zero condition (leave the condition as it is).
	Failed string
	// NotServed, when set, makes the flow ask whether the cluster serves the child's kind
	// before it applies Desired, and is the False reason and message when it does not.
	NotServed *Reason
	// Check, when set, refuses a desired child before any API call.
	Check func(desired O) error
	// Verdict, when set, judges the applied child (the server's copy); nil: True with
	// reason Ready.
	Verdict func(applied O) reconcile.Outcome
}

// Set describes a set of optional children of one kind for [ReconcileSet]: the owner
// controls exactly the children Desired lists.
type Set[O client.Object] struct {
	// Desired are the wanted children; empty when the owner wants none. An entry with
	// an empty namespace takes the owner's. On return each holds the server's copy.
	Desired []O
	// Type is the condition type of the outcome.
	Type string
	// Ready is the True reason once every desired child is applied.
	Ready string
	// NotRequired is the True reason and message when Desired is empty.
	NotRequired Reason
	// Failed, when set, is the False reason of every error but a failed probe; empty:
	// an error comes with the zero condition.
	Failed string
	// NotServed, when set, makes the flow ask whether the cluster serves the kind before
	// it lists or applies anything; see [Optional].NotServed.
	NotServed *Reason
}
