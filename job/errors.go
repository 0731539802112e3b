package job

import (
	"errors"

	"github.com/c5c3/reconciler-sdk/apply"
)

// Sentinel errors of the package. Test for them with errors.Is.
var (
	// ErrJobFailed reports a Job that failed permanently (a Failed condition, e.g. its
	// backoffLimit was exceeded) and whose re-run key is unchanged, so running it again
	// would fail again. RunJob keeps returning it, without touching the Job, until the
	// desired pod template (or the explicit re-run key) changes.
	ErrJobFailed = errors.New("job failed permanently")
	// ErrInvalidJob reports a Job that RunJob refuses before any API call: no name, a
	// name longer than 63 characters, no namespace, a pod template without containers,
	// a spec.ttlSecondsAfterFinished ([ErrTTLAfterFinished]), or an empty re-run key.
	ErrInvalidJob = errors.New("invalid job")
	// ErrTTLAfterFinished reports a run-once Job that sets spec.ttlSecondsAfterFinished,
	// which would run it again after every TTL ("The Job is the only record of a run").
	// Refused before any request; errors that wrap it wrap [ErrInvalidJob] too.
	ErrTTLAfterFinished = errors.New("run-once Job sets spec.ttlSecondsAfterFinished")
	// ErrNotControlled reports an existing Job of the desired name the owner does not
	// control ("Ownership"). It is [apply.ErrNotControlled], so one errors.Is test
	// covers the refusals of every SDK helper.
	ErrNotControlled = apply.ErrNotControlled
)
