package job

import "errors"

// Sentinel errors of the package. Test for them with errors.Is.
var (
	// ErrJobFailed reports a Job that failed permanently (a Failed condition, e.g. its
	// backoffLimit was exceeded) and whose re-run key is unchanged, so running it again
	// would fail again. RunJob keeps returning it, without touching the Job, until the
	// desired pod template (or the explicit re-run key) changes.
	ErrJobFailed = errors.New("job failed permanently")
	// ErrInvalidJob reports a Job that RunJob refuses before any API call: no name, a
	// name longer than 63 characters, no namespace, a pod template without containers,
	// or an empty re-run key.
	ErrInvalidJob = errors.New("invalid job")
	// ErrNotControlled reports an existing Job of the desired name that the owner does
	// not control. RunJob neither reads its result nor deletes it.
	ErrNotControlled = errors.New("job exists but is not controlled by the owner")
)
