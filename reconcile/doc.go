// Package reconcile turns an operator's Reconcile into a table of named steps, with
// per-step metrics, metav1.Condition helpers, an aggregate Ready condition and a status
// that is persisted on every exit path.
//
// # Steps and pipelines
//
// A [Step] is a name, the condition type it owns, and a [StepFunc] — a function of the
// context and the custom resource returning (ctrl.Result, error); a reconciler's
// methods fit it directly. [NewPipeline] validates a table of steps once, at controller
// setup, and [Pipeline.Run] runs it on each pass:
//
//   - steps run in table order, and the pass ends at the first step that returns a
//     non-zero result (a requeue) or an error;
//   - a [Sequential] group runs every member once, whatever the others return; member
//     errors are joined with [JoinErrors], and with no error the shortest requeue wins;
//   - a [Parallel] group runs its members concurrently, each on its own deep copy of the
//     custom resource and owning exactly one condition type, which is merged back into
//     the resource for every member — the failed ones too — once all have returned;
//   - a step with a Name is instrumented; an unnamed step (such as a prune step) runs
//     bare.
//
// A step never yields a result together with an error: controller-runtime ignores the
// result when Reconcile returns an error, and the runner enforces the same rule — the
// error wins and the result is dropped. A panicking step is recovered into an error
// wrapping [ErrPanic] after its metrics are recorded, so that the pass ends like any
// failed step and its status is still written.
//
// # Metrics
//
// [NewMetrics] registers, on controller-runtime's metrics.Registry by default and under
// a caller-chosen prefix, the histogram <prefix>_reconcile_duration_seconds (label
// sub_reconciler) and the counter <prefix>_reconcile_errors_total (labels
// sub_reconciler and condition_type). Label values are the names and condition types of
// the step table, resolved once in NewPipeline, so their number is bounded by the table
// and the hot path does no label lookup. A named group records its own series as well
// as its members' (its duration spans theirs, and a failing member counts an error under
// its own name and under the group's). Registering a prefix twice reuses the collectors
// registered first.
//
// # Conditions and Ready
//
// [SetCondition], [MarkTrue], [MarkFalse] and [MarkUnknown] set a metav1.Condition on an
// [Object] with observedGeneration stamped; lastTransitionTime moves only when the
// status flips. The condition they set is always one the API server accepts (see
// [SetCondition] for how an invalid reason or an over-long message is repaired).
// [AggregateReady] sets Ready True with reason AllReady exactly when every listed
// sub-condition is True for the current generation, and otherwise False with a reason
// and message that name the first sub-condition holding it back.
//
// # Status on every exit path
//
// [RunPass] wraps a whole pass — the preamble (fetch, finalizers, deletion path,
// target-cluster resolution) and the pipeline. Whatever the pass returns — a zero
// result, a requeue, an error, or a panic, recovered into an error wrapping [ErrPanic]
// — it re-aggregates Ready and writes the status subresource when, and only when, it
// differs from the status it read. An object gone by then (its last finalizer was
// removed) is not written; a type without a status subresource (a 404 while the object
// exists) is an error wrapping [ErrStatusNotServed], never a silent drop.
//
// The write is an Update of the status subresource, guarded by the object's
// resourceVersion. On a 409 Conflict RunPass re-reads the object and merges this pass's
// own changes into it three ways — each condition type the pass set, changed or
// removed, and each other top-level status field it changed — re-aggregates Ready over
// the merged conditions and writes again, within [PassOptions].ConflictBackoff. A
// change is written where the stored object still holds what the pass read (conditions
// compared by type, status, reason, message and observedGeneration; a
// lastTransitionTime moves only with a status flip). Where another writer changed that
// condition or field after this pass read the object — a newer pass, or the pass's own
// read served by a cache lagging behind — the stored value stays, the change is dropped
// (logged at V(1) with the condition type or field name) and RunPass returns a requeue
// after [StaleStatusRequeue] at the latest, without an error, so the pass decides again
// from the stored object; a pass that returned an error returns it alone, a terminal one
// joined to [ErrStatusSuperseded] so that controller-runtime retries it. Conditions
// and fields others wrote meanwhile that this pass left alone are kept. When the
// re-read object has a newer metadata.generation, the pass's status describes a spec
// that is no longer current and is not written at all. Afterwards obj holds the pass's
// view of the object, not necessarily what was stored after a conflict. [MergeStatus] is
// that merge on the unstructured form of a status, for engines that write the status of
// unstructured objects themselves (package katalog does). [AddFinalizer] and [RemoveFinalizer] are idempotent and leave the in-memory
// status alone, and [IgnoreStatusWrites] keeps the controller from being woken by its
// own status writes.
//
// # Writes and converged passes
//
// The finalizer patches and the status write are reported through apply.Record, as
// apply.ActionConfigured of the custom resource with the paths they changed
// (metadata.finalizers, status.conditions, ...), in the one shape in which every helper
// of the SDK reports its writes; [PassOptions].LogWrites logs all the writes of a pass.
// Pass an apply.Applier over the manager's cached client as the client, and the writes
// carry the operator's field manager. A converged pass — no finalizer to add, no status
// change, steps that are converged themselves — then sends no request at all: the
// object is read from the informer, and a status equal to the one read is not written.
//
// # Under faults, races and shutdown
//
//   - The status write has a context of its own, derived from the pass's without its
//     cancellation and bounded by [StatusWriteTimeout] (or
//     [PassOptions].StatusWriteTimeout): a pass that ends because its deadline passed or
//     the manager is shutting down still persists the conditions it set.
//   - Errors are joined with [JoinErrors]: the join is terminal for controller-runtime
//     (see [IsTerminal]) only when every part is, so a step's terminal error joined to
//     a failed status write, or a Parallel member's terminal error joined to another
//     member's transient one, is retried.
//   - Give [PassOptions].APIReader the manager's mgr.GetAPIReader() when the client is
//     the manager's cached client: a 404 on the status write is then confirmed, and a
//     conflict re-read, on the API server rather than in a cache that may lag behind —
//     an object deleted during the pass is not mistaken for a type without a status
//     subresource ([ErrStatusNotServed]). Without it, the 404 is confirmed by an
//     unstructured read, which a manager's client does not serve from its cache.
//   - Two reconcilers of one object (a leader-election overlap) do not make conditions
//     flap: a pass whose status write conflicts with a newer generation's status
//     leaves that status alone, since it describes a spec that is no longer current,
//     and a pass that read an older status of the same generation (its cache lagging
//     behind the other's write) does not write its decisions over what changed since.
//   - A condition the API server would refuse cannot block the status: [SetCondition]
//     replaces a reason that [ValidateReason] refuses by [ReasonInvalidReason] (naming
//     the refused one in the message) and cuts messages to [MaxMessageLength], and
//     RunPass repairs conditions set around it the same way and logs each at error
//     level.
//   - A pass killed between two of its writes leaves no status behind; the next pass
//     starts from what is stored and converges, as long as the steps are idempotent
//     (they read before they create, and an object that exists counts as done).
//
// The package's tests prove each of these on envtest, with a fault injected into each
// API call of a pass in turn, two managers reconciling one object, and passes stopped
// between their writes.
//
// # What to read past the cache
//
// A manager's client serves every Get and List from an informer, and the first read of
// a kind starts a list and watch of it (cluster-wide unless cache.Options
// DefaultNamespaces says otherwise) that holds every object of the kind in memory for
// the life of the process. [UncachedObjects] lists the two kinds the SDK reads that are
// costly to cache that way and read rarely: Pods and ControllerRevisions, which the
// in-use guard of config.PruneImmutableConfigMaps lists in one namespace only when a
// prune has something to delete. Secrets and ConfigMaps are read on every pass, so they
// belong in the cache, but only the operator's own: apply.CacheOptions. An operator
// without an Applier adds &corev1.Secret{} to the list instead (then each Secret read
// is one GET), and never restricts the Secret cache with a label selector without an
// Applier's APIReader: a Secret outside the selector would read as not found, and a
// helper would take it for missing. The other kinds the SDK reads (its children,
// Deployments, ReplicaSets, Jobs, the ESO and mariadb-operator kinds) are usually
// watched by the controller anyway (Owns), so reading them from the cache costs
// nothing more.
//
// # Flows answer with an Outcome
//
// Every flow and gate of the SDK outside this package (the optional-child flows, the
// database flows, the health check, the secret-store and target-cluster gates) answers
// (Outcome, error): the condition to set and the requeue to return. [Outcome] states
// the rules once; a step hands the answer over with [Settle]. [RetryInterval] is the
// requeue of a transient failure a step does not return as an error; the intervals of
// one kind of wait live in the package that waits.
//
// # Steps declare what they own
//
// [Step].Owns lists the kinds a step creates and controls. [Pipeline.Owned] gathers
// them for the controller's watches and its children list, [Pipeline.Steps] names the
// rows, and [Pipeline.RunStep] runs one row in a test.
//
// # Testing steps
//
// Package steptest runs one step on controller-runtime's fake client from a table of
// cases — given objects, expected result or error, expected conditions and objects —
// so an operator author tests a step without a control plane.
//
// # Footprint
//
// Per helper: what it reads and writes, which reads start an informer when the client is
// a manager's cached client (a typed Get or List through mgr.GetClient() does; a read as
// unstructured, or through an APIReader, does not), and the RBAC verbs it needs. The
// package has no rbac.go: the custom resource is the operator's, so the verbs go in the
// operator's own RBAC markers.
//
//   - [RunPass]: gets the custom resource (informer: the CR's kind) and writes its status
//     subresource (an update) when it changed; on a Conflict reads it again, and on a 404
//     confirms it, through [PassOptions].APIReader when set (no informer) or else through
//     the client (the Conflict re-read typed, the 404 as unstructured, which starts no
//     informer). RBAC: the CR get, list, watch; the CR's status subresource update.
//   - [AddFinalizer], [RemoveFinalizer]: patch the custom resource's metadata.finalizers
//     (a merge patch with an optimistic lock); no read. RBAC: the CR patch.
//   - [NewPipeline], [Sequential], [Parallel]: no request of their own; the steps make
//     theirs.
//   - [SetCondition], [MarkTrue], [MarkFalse], [MarkUnknown], [AggregateReady],
//     [IgnoreStatusWrites], [UncachedObjects], [NewMetrics]: no API call.
//
// A converged pass costs what "Writes and converged passes" says: no request through an
// apply.Applier over a manager's cached client.
package reconcile
