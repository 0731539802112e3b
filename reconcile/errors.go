package reconcile

import "errors"

// Sentinel errors of the package. Test for them with errors.Is.
var (
	// ErrInvalidPipeline reports a step table that NewPipeline refuses: a step without a
	// function, a group without members, a duplicate step name, or a Parallel member that
	// is a group or does not own exactly one condition type of its own.
	ErrInvalidPipeline = errors.New("invalid pipeline")
	// ErrPanic reports a step, or a whole pass, that panicked. The runner recovers the
	// panic, records the step's metrics, logs the stack and returns an error wrapping
	// ErrPanic in its place, so the status is still persisted.
	ErrPanic = errors.New("panic")
	// ErrInvalidMetricsPrefix reports a metrics prefix that is not a valid Prometheus
	// metric name prefix ([a-zA-Z_:][a-zA-Z0-9_:]*).
	ErrInvalidMetricsPrefix = errors.New("invalid metrics prefix")
	// ErrStatusNotServed reports a status write answered 404 for an object that exists:
	// its CRD does not enable the status subresource
	// (+kubebuilder:subresource:status), so no pass could ever persist its conditions.
	ErrStatusNotServed = errors.New("status subresource not served")
)

// StepError is the error a named step (or named group) returns through the runner: it
// names the step and wraps what the step returned, so errors.Is and errors.As still see
// the step's own error.
type StepError struct {
	// Step is the name of the step.
	Step string
	// Err is the error the step returned.
	Err error
}

// Error returns "step <name>: <error>".
func (e *StepError) Error() string { return "step " + e.Step + ": " + e.Err.Error() }

// Unwrap returns the step's own error.
func (e *StepError) Unwrap() error { return e.Err }
