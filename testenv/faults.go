package testenv

import "github.com/c5c3/reconciler-sdk/testenv/faults"

// The fault injection of package [faults], under its old names. They keep compiling for
// one release.

// Verb names one kind of client call a fault can be injected into.
//
// Deprecated: use faults.Verb.
type Verb = faults.Verb

// VerbGet and the other Verb constants name the client calls a FaultInjector fails.
//
// Deprecated: use faults.VerbGet, faults.VerbList, ... (the same names).
const (
	VerbGet          = faults.VerbGet
	VerbList         = faults.VerbList
	VerbCreate       = faults.VerbCreate
	VerbUpdate       = faults.VerbUpdate
	VerbPatch        = faults.VerbPatch
	VerbApply        = faults.VerbApply
	VerbDelete       = faults.VerbDelete
	VerbStatusUpdate = faults.VerbStatusUpdate
	VerbStatusPatch  = faults.VerbStatusPatch
)

// Verbs returns every Verb, in a stable order.
//
// Deprecated: use faults.Verbs.
func Verbs() []Verb { return faults.Verbs() }

// ErrInjected marks every injected error.
//
// Deprecated: use faults.ErrInjected (the same error).
var ErrInjected = faults.ErrInjected

// Fault is one way an API call can fail.
//
// Deprecated: use faults.Fault.
type Fault = faults.Fault

// The faults of the standard matrix.
//
// Deprecated: use faults.Conflict, faults.Internal, faults.Timeout and faults.Canceled.
var (
	FaultConflict = faults.Conflict
	FaultInternal = faults.Internal
	FaultTimeout  = faults.Timeout
	FaultCanceled = faults.Canceled
)

// Faults returns the faults of the standard matrix.
//
// Deprecated: use faults.All.
func Faults() []Fault { return faults.All() }

// ReadFaults returns the faults a read can meet.
//
// Deprecated: use faults.Reads.
func ReadFaults() []Fault { return faults.Reads() }

// FaultInjector fails exactly one armed call of a client.
//
// Deprecated: use faults.Injector.
type FaultInjector = faults.Injector

// NewFaultInjector returns an injector that fails nothing until Arm is called.
//
// Deprecated: use faults.NewInjector.
func NewFaultInjector() *FaultInjector { return faults.NewInjector() }

// FaultMatrix runs a scenario under every verb, call and fault.
//
// Deprecated: use faults.Matrix.
type FaultMatrix = faults.Matrix

// FaultRun is one run of a FaultMatrix.
//
// Deprecated: use faults.Scenario.
type FaultRun = faults.Scenario
