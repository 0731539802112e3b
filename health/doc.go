// Package health probes the cluster-local HTTP endpoint of the API an operator runs (a
// login page, a version document) and reports the result as a condition: the
// health-check step of a reconciler.
//
// A [Prober] sends one HTTP GET per probe, bounded by [Options.Timeout], and keeps a TTL
// cache of passing probes ([Options.TTL], 30 s by default) keyed by the CR's UID and the
// probed URL: within the TTL a passing probe is reused without a request, so a CR whose
// reconcile runs often does not hammer its own API. Failing probes are never cached:
// the next pass probes again. A changed URL (a new endpoint) is a different key.
// [EndpointURL] gives the URL to probe from the CR's status.endpoint and the API's
// path: empty, and so EndpointNotReady without a request, until the endpoint is set.
//
// # Outcomes
//
// [Prober.Flow] answers in the reconcile.Outcome shape: the condition of the caller's
// type (e.g. APIReady; [reconcile.Settle] stamps observedGeneration), True or False
// with one of these reasons:
//
//	Reason               Status  When
//	APIHealthy           True    the endpoint answered 2xx (and Options.Validate, if set, accepted the answer)
//	APIUnhealthy         False   the endpoint answered 2xx but Options.Validate rejected the answer: the server
//	                             is up, but what it serves says the API is not working
//	HealthCheckFailed    False   the endpoint answered with a status outside 2xx (after following redirects on
//	                             the same host), or redirected to another host, which is not followed
//	HealthCheckTimeout   False   no complete answer within Options.Timeout (connect, headers or body)
//	ConnectionFailed     False   no HTTP answer for another reason: connection refused or reset, TLS handshake
//	                             failure, DNS failure other than "no such host", too many redirects
//	EndpointNotReady     False   there is nothing to probe yet: the URL is empty (the endpoint has not been
//	                             published, e.g. status.endpoint unset) or its host name does not resolve
//	                             (DNS "no such host": the Service does not exist yet)
//
// A Service whose pods are not ready yet usually shows as ConnectionFailed, not
// EndpointNotReady: its name resolves, and kube-proxy rejects the connection. Run the
// probe after the step that waits for the Deployment.
//
// Every False outcome requeues after [RetryInterval] (10 s) and returns no error; a True
// outcome returns a zero result. Messages carry the method, the URL with any password
// and query value redacted, and the status line or the transport error; never a
// response body.
//
// # Hostile endpoints
//
// Whoever answers on the probed endpoint controls what comes back, and the prober
// assumes nothing about it:
//
//   - Requests follow the SDK's outbound policy ([outbound.Policy], set in
//     [Options].Outbound). A destination that resolves to a loopback, link-local,
//     unspecified or multicast address is not connected to: the probe fails with
//     ConnectionFailed and the message names the refused address. Redirects are
//     followed only on the probed URL's host name (any port, never from https to plain
//     http, up to 10 hops, each checked against the first request's host). A redirect to
//     another host — an internal service, a cloud metadata address — is not followed:
//     the probe fails with HealthCheckFailed and the message names the host it was
//     sent to. Options.Outbound.AllowCIDRs, AllowHosts and AllowCrossHostRedirects
//     open these doors.
//   - Every piece of text a message quotes that the prober does not write itself —
//     the URL, the status line, the refused redirect's host, a transport error, the
//     error of Options.Validate — is made valid UTF-8 without control characters and
//     cut to [MaxQuotedLength] bytes, ending in "…" when cut. A message therefore
//     stays far below [MaxMessageLength], the API server's limit for a condition
//     message, and a 100 KiB status line cannot make the status write of the custom
//     resource fail with 422 Unprocessable Entity.
//   - At most Options.MaxBodyBytes of the body are read, and no message quotes it.
//
// Reasons are the constants above, all valid condition reasons.
//
// # Cancellation
//
// A probe cut short because the caller's context was cancelled or hit its deadline says
// nothing about the API: Flow and Probe then return the context's error (errors.Is
// context.Canceled or context.DeadlineExceeded) with a zero condition and a zero result,
// so the caller leaves the condition as it was. Only the probe's own Options.Timeout
// yields HealthCheckTimeout.
//
// # Bad input
//
// A URL that is not an absolute http or https URL with a host is refused with an error
// wrapping [ErrInvalidURL], before any request.
//
// # Footprint
//
// No Kubernetes API request and no RBAC: [Prober.Flow] and [Prober.Probe] send one HTTP
// GET to the URL given (plus the redirects it allows); no informer is started.
package health
