package reconcile

import "time"

// RetryInterval is the requeue of a retry after a transient failure that a step does
// not return as an error (a failed health check, a dependency that answered but is not
// usable yet): 10 s. The intervals of one kind of wait live in the package that waits:
// deployment.PollInterval, secrets.PollInterval, multicluster.RetryInterval,
// health.DefaultTTL.
const RetryInterval = 10 * time.Second

// Deprecated aliases of the intervals that moved to the package they belong to; they
// are removed in the next release.
const (
	// Deprecated: use deployment.PollInterval.
	DeploymentPollInterval = 10 * time.Second
	// Deprecated: use secrets.PollInterval.
	SecretPollInterval = 15 * time.Second
	// Deprecated: use multicluster.RetryInterval.
	TargetClusterRetryInterval = 15 * time.Second
	// Deprecated: use health.DefaultTTL.
	ProbeTTL = 30 * time.Second
)
