// Package capability answers "does this cluster serve this kind?" for optional children
// whose API an operator cannot assume: a Gateway API HTTPRoute, a VerticalPodAutoscaler.
//
// [IsKindServed] asks a cluster's RESTMapper and sorts the answer three ways:
//
//   - (true, nil): the kind is served at that group and version;
//   - (false, nil): the group, the version or the kind is not served (the CRD is not
//     installed): the mapper returned a no-match error, or discovery answered 404 for
//     the group/version;
//   - (false, err) with err wrapping [ErrProbeFailed]: discovery itself failed (the API
//     server is unreachable, answered 5xx, or the request was refused), so nothing is
//     known. Flows report this as CapabilityProbeFailed and return the error so that the
//     request is retried with back-off; they never read it as "not installed".
//
// # Per cluster
//
// The probe takes the RESTMapper of the cluster the child lands on, never a global one:
// client.Client.RESTMapper() of the target cluster's client, or cluster.Cluster's
// GetRESTMapper(). The verdict for the management cluster (used at setup to decide
// whether to register a watch) and the verdict for a target cluster are independent.
//
// # Caching and when a new CRD is noticed
//
// IsKindServed caches nothing itself; what is cached is the mapper's business. The
// mapper controller-runtime gives every client and manager (apiutil.NewDynamicRESTMapper)
// keeps the kinds it has found and re-runs discovery for the group/version on every
// miss. So:
//
//   - a CRD installed after start-up is noticed on the very next probe, at the cost of
//     one discovery request (GET /apis/<group>/<version>) per probe while it is missing;
//   - a kind once found stays "served" for the life of that mapper even if its CRD is
//     later deleted; the next write of that kind then fails with the API server's
//     NotFound, which flows propagate as an error.
//
// A static mapper (meta.DefaultRESTMapper, or one built once from discovery) never
// notices a CRD installed later; do not use one here.
//
// [Probe] adds a negative cache on top of a mapper, for callers that probe a missing kind
// often (every pass of every CR on a cluster without the CRD): a "not served" verdict is
// reused for [ProbeOptions.NegativeTTL] and then asked again, and [Probe.Forget] drops a
// cached verdict at once (for instance from a CustomResourceDefinition watch). Positive
// verdicts and errors are never cached by Probe: the mapper already remembers positives,
// and an error must be retried.
//
// # Footprint
//
// Per helper: what it reads and writes, which reads start an informer when the client is
// a manager's cached client (a typed Get or List through mgr.GetClient() does; a read as
// unstructured, or through an APIReader, does not), and the RBAC verbs it needs. The
// package has no rbac.go: none is needed.
//
//   - [IsKindServed], [Probe.IsKindServed]: ask the RESTMapper given, which answers from
//     discovery (GET /api and /apis, open to every authenticated user through the
//     system:discovery ClusterRole); no object is read, no informer is started. A
//     dynamic mapper asks discovery again for a kind it does not know; [Probe] caches
//     that negative answer for ProbeOptions.NegativeTTL.
package capability
