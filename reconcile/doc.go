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
//     errors are joined with errors.Join, and with no error the shortest requeue wins;
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
// status flips. [AggregateReady] sets Ready True with reason AllReady exactly when every
// listed sub-condition is True for the current generation, and otherwise False with a
// reason and message that name the first sub-condition holding it back.
//
// # Status on every exit path
//
// [RunPass] wraps a whole pass — the preamble (fetch, finalizers, deletion path,
// target-cluster resolution) and the pipeline. Whatever the pass returns, it
// re-aggregates Ready and writes the status subresource when, and only when, it
// changed. A 409 Conflict on that write is resolved by re-reading the object and
// reapplying this pass's own status changes. [AddFinalizer] and [RemoveFinalizer] are
// idempotent and leave the in-memory status alone, and [IgnoreStatusWrites] keeps the
// controller from being woken by its own status writes.
//
// # Requeue intervals
//
// [DeploymentPollInterval], [RetryInterval], [SecretPollInterval],
// [TargetClusterRetryInterval] and [ProbeTTL] are the intervals of the specification.
//
// # Testing steps
//
// Package steptest runs one step on controller-runtime's fake client from a table of
// cases — given objects, expected result or error, expected conditions and objects —
// so an operator author tests a step without a control plane.
package reconcile
