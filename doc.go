// Package reconcilersdk is the root of reconciler-sdk, a set of building blocks for
// Kubernetes operators that manage OpenStack services (an identity service, a dashboard,
// an image service, ...) and, more generally, any operator whose custom resource owns a
// tree of children.
//
// The root package holds no code; the packages below it do, each with one concern:
//
//   - apply: the Server-Side Apply primitive (EnsureObject, FieldManager) every Ensure*
//     helper builds on: one field manager, ForceOwnership, conflict retry, the controller
//     owner reference re-asserted on every call, and converged applies that never write.
//   - reconcile: the pipeline. Named steps, sequential and parallel groups, per-step
//     metrics, metav1.Condition helpers, the aggregate Ready condition, status persisted
//     on every exit path, finalizers and a predicate; reconcile/steptest tests one step
//     from a table of cases.
//   - config: oslo.config INI rendering and content-addressed, immutable ConfigMaps and
//     Secrets, with pruning that never deletes the configuration in use.
//   - policy: oslo.policy files: load, parse, validate, render and merge.
//   - deployment, job, tls: the workload children (Deployment, Service, PDB, HPA, VPA;
//     run-once Jobs and CronJobs; cert-manager Certificates), readiness as data.
//   - secrets, database: the External Secrets Operator gates, PushSecret and
//     generate-once credentials (on the SDK's typed ESO mirror in secrets/eso), and
//     mariadb-operator provisioning and db-sync flows; api/v1 holds the spec blocks
//     operators embed in their CRDs (SecretStoreRefSpec, TargetClusterRefSpec).
//   - child, capability, httproute, netpol, health: one mechanism for optional children
//     (child: applied when wanted, deleted when not, an optional served-kind probe, a
//     verdict), whether a cluster serves a kind, the HTTPRoute and NetworkPolicy flows
//     on it, and the TTL health probe.
//   - credential: the shared generate-once path for credential Secrets (restored from a
//     backup when lost, regenerated only with an Event naming the Secret).
//   - outbound, httpauth: the safe defaults where tenants meet. outbound is the one
//     policy for HTTP calls the SDK makes on behalf of what others wrote (no loopback,
//     link-local or metadata destinations, no redirect to another host); httpauth puts
//     the operator's own endpoints (metrics, the Katalog inspector) behind the API
//     server's authentication and authorization. docs/security.md is the threat model.
//   - operator: a single-cluster operator's main (flags, manager, label-filtered cache,
//     Applier, probes, secure metrics, leader election) and the scheme of every kind the
//     SDK speaks; multicluster builds its bootstrap on it.
//   - multicluster, satellite: children on a target cluster named by
//     spec.targetClusterRef (resolution on multicluster-runtime, TargetClusterUnavailable,
//     ownership labels, deletion sweep, remote watches), and the handshake between a
//     parent and the satellite CRs that project configuration into it.
//   - testenv: the test kit: one envtest control plane per test package with the
//     upstream CRDs, optionally real controllers (garbage collector, Deployments, Jobs),
//     a namespace per test, request counting and a second control plane as a target
//     cluster; testenv/world plays a CR's dependencies, testenv/simulate the upstream
//     operators' status, testenv/faults API errors per verb.
//   - admit: the admission webhooks of a CRD (registration, one Invalid error listing
//     every problem, updates refused only for new problems); admit/admittest tests them.
//   - conformance: the behavioural suite an operator runs against itself on that kit
//     (convergence, quiet converged passes, ownership, faults, drift, deletion, ...).
//
// The packages are independent of each other unless one builds on apply; the core
// (apply, config, reconcile) imports none of the External Secrets, cert-manager,
// MariaDB or multicluster APIs.
//
// # How the pieces compose
//
// A reconciler fetches its custom resource, then runs a table of steps. Each step builds
// the desired child objects from scratch and hands them to apply.EnsureObject (or a
// higher-level Ensure* helper built on it), which applies them under the SDK's field
// manager with the custom resource as controller. Readiness comes back as data, the
// step sets a condition and asks for a requeue when a child is not ready yet.
//
// # Ownership
//
// No helper of the SDK takes what is not its owner's. Before it applies over, deletes,
// re-creates or prunes an existing object, it checks that the owner controls it: a
// controller owner reference, or on a target cluster the owner's claim labels. An
// object the owner does not control (another object's child, or one without a
// controller, made by kubectl, Helm or a script) is refused with an error wrapping
// apply.ErrNotControlled that names its controller, and left in place; an object being
// deleted is refused with apply.ErrBeingDeleted, and the caller retries once it is
// gone; a delete of a child the owner no longer wants leaves someone else's object of
// that name alone. An object without a controller is adopted only when whoever manages
// it consents, with the annotation apply.AdoptAnnotation = "true" on the object.
// Generated credentials are never generated again while a backup that may restore them
// is pending (package credential). Package apply holds the mechanism (its "Ownership"
// and "Target clusters" sections, apply.CheckControlled); the helpers' doc comments
// link there instead of repeating it.
//
// # One applier per operator, and what it wrote
//
// Build one apply.Applier from the manager's client with the operator's own field-manager
// name and pass it wherever a helper takes a client.Client: every write of the SDK is then
// made under that name, and a converged apply sends nothing (the Applier remembers what
// it applied and compares with the informer's copy). The helpers find the Applier through
// the apply.Capable interface, never by the client's concrete type, so a client wrapped
// around it with apply.Wrap (an interceptor, a fault injector) keeps the field manager,
// the skip and the ownership mode. Helpers answer in the shapes their
// signatures give (a readiness bool, a condition, a result); what they wrote comes back
// in one shape for all of them: wrap the pass's context with apply.WithWrites and read
// the collected apply.Write values (Created, Configured with the changed field paths,
// Unchanged, Skipped, Deleted) to log, count or emit events without a Get.
package reconcilersdk
