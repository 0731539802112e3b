package reconcile

import (
	"errors"

	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Sentinel errors of the package. Test for them with errors.Is.
var (
	// ErrInvalidPipeline reports a step table that NewPipeline refuses: a step without a
	// function, a group without members, a duplicate step name, or a Parallel member that
	// is a group or does not own exactly one condition type of its own.
	ErrInvalidPipeline = errors.New("invalid pipeline")
	// ErrUnknownStep reports a [Pipeline.RunStep] call naming a step the table does not
	// have.
	ErrUnknownStep = errors.New("no such step")
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
	// ErrInvalidReason reports a condition reason the API server refuses: empty, longer
	// than 1024 bytes, or not CamelCase — it must match
	// ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$ (see [ValidateReason]).
	ErrInvalidReason = errors.New("invalid condition reason")
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

// IsTerminal reports whether controller-runtime treats err as terminal: it logs and
// counts such an error but does not requeue the request. It is controller-runtime's own
// test, errors.Is(err, reconcile.TerminalError(nil)) of package
// sigs.k8s.io/controller-runtime/pkg/reconcile, so the two never disagree.
func IsTerminal(err error) bool {
	return err != nil && errors.Is(err, crreconcile.TerminalError(nil))
}

// JoinErrors joins errs as errors.Join does (nil dropped, a single error returned as it
// is), except that the join is terminal ([IsTerminal]) only when every part is: a
// terminal error joined to a transient one is retried. errors.Is and errors.As still see
// every part. The groups, [RunPass] and steps that join errors of their own use it.
func JoinErrors(errs ...error) error {
	parts := make([]error, 0, len(errs))
	for _, err := range errs {
		if err != nil {
			parts = append(parts, err)
		}
	}
	switch len(parts) {
	case 0:
		return nil
	case 1:
		return parts[0]
	}
	terminal := 0
	for _, err := range parts {
		if IsTerminal(err) {
			terminal++
		}
	}
	if terminal > 0 && terminal < len(parts) {
		for i, err := range parts {
			if IsTerminal(err) {
				parts[i] = &retryable{err: err}
			}
		}
	}
	return errors.Join(parts...)
}

// retryable hides the terminal mark of err from errors.Is while exposing everything else
// err wraps. It has no Unwrap method on purpose: errors.Is would otherwise descend into
// err and find the mark.
type retryable struct{ err error }

func (e *retryable) Error() string { return e.err.Error() }

// Is reports whether err matches target, unless target is the terminal mark.
func (e *retryable) Is(target error) bool {
	return !errors.Is(target, crreconcile.TerminalError(nil)) && errors.Is(e.err, target)
}

// As finds the first error in err's tree that matches target.
func (e *retryable) As(target any) bool { return errors.As(e.err, target) }
