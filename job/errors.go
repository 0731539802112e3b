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
	// ErrTTLAfterFinished reports a run-once Job that sets spec.ttlSecondsAfterFinished.
	// The TTL controller would delete the finished Job, and RunJob, finding no Job, would
	// create it again: the Job would run again after every TTL, forever. RunJob and
	// RunJobWithKey refuse such a Job before any request; errors that wrap it wrap
	// [ErrInvalidJob] too.
	ErrTTLAfterFinished = errors.New("run-once Job sets spec.ttlSecondsAfterFinished")
	// ErrNotControlled reports an existing Job of the desired name that the owner does
	// not control (it has no controller, or another one). RunJob neither reads its
	// result nor deletes nor re-creates it. It is apply.ErrNotControlled, so one
	// errors.Is test covers the refusals of every SDK helper; the error carries a
	// *apply.NotControlledError naming the Job's controller.
	ErrNotControlled = apply.ErrNotControlled
)
