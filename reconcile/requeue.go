package reconcile

import "time"

// Requeue intervals and TTLs shared by the operators built on the SDK (the Horizon
// reconciler's requeue semantics). Steps return them as ctrl.Result{RequeueAfter: ...}.
const (
	// DeploymentPollInterval is how often a step polls a Deployment that is not ready
	// yet (and an HTTPRoute not yet accepted): 10 s.
	DeploymentPollInterval = 10 * time.Second
	// RetryInterval is the requeue of a retry after a transient failure that is not
	// returned as an error, such as a failed health check: 10 s.
	RetryInterval = 10 * time.Second
	// SecretPollInterval is how often the ESO secret gate polls a secret store or an
	// ExternalSecret-synced Secret that is not ready yet: 15 s.
	SecretPollInterval = 15 * time.Second
	// TargetClusterRetryInterval is the requeue when spec.targetClusterRef names a
	// cluster that is not registered or no longer resolves (TargetClusterUnavailable): 15 s.
	TargetClusterRetryInterval = 15 * time.Second
	// ProbeTTL is how long a passing health probe is reused from the probe cache: 30 s.
	ProbeTTL = 30 * time.Second
)
