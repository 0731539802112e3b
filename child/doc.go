// Package child is the one mechanism behind the SDK's optional-child flows: a child
// that a custom resource may or may not want (an HTTPRoute, a NetworkPolicy, a
// HorizontalPodAutoscaler, a set of VerticalPodAutoscalers), applied, deleted, probed
// for and judged the same way everywhere.
//
// [Reconcile] runs the flow for one child described by an [Optional]; [ReconcileSet]
// for a [Set] of children of one kind, the owner controlling exactly those listed. Both
// answer (reconcile.Outcome, error) under the rules written on [reconcile.Outcome]: the
// condition carries no observedGeneration, a zero condition means "leave it as it is",
// and a non-zero Result never comes with an error.
//
// # Outcomes
//
//   - nothing wanted (Optional.Desired nil, Set.Desired empty): the owner's children
//     are deleted; True with the NotRequired reason and message.
//   - wanted, but NotServed is set and the cluster does not serve the kind
//     (capability.IsKindServed on c.RESTMapper()): False with the NotServed reason and
//     message, nil error, no requeue, nothing written; a later install is noticed on a
//     later pass. The single form does not probe when nothing is wanted (a cluster
//     without the kind has no child to delete); the set form always probes, as its
//     prune lists the kind.
//   - the probe cannot tell (discovery failed): False
//     capability.ReasonCapabilityProbeFailed and the error, wrapping
//     capability.ErrProbeFailed, so that the request is retried with back-off.
//   - wanted and served: applied through Server-Side Apply (apply.EnsureObject, owner
//     as controller, a converged child not rewritten), then judged: Optional.Verdict
//     when set (for instance "accepted by its Gateway", else False with a requeue), else
//     True with the Ready reason.
//   - an error: False with the Failed reason and the error's text when the descriptor
//     names one, else the zero condition; the error propagates.
//
// Refused before any API call, with an error naming the kind and key: a nil owner or
// one never persisted (apply.ErrNilOwner, apply.ErrOwnerNotPersisted), a nil scheme
// (apply.ErrNilScheme), a key without a name (apply.ErrMissingName), a desired child
// whose namespace/name differs from the key ([ErrKeyMismatch]; an empty one is taken
// from the key), a child Optional.Check refuses, an invalid set ([ErrInvalidSet]). Kind
// names in messages and errors come from the scheme.
//
// # Never taking what is not ours
//
// The flows never write over, take over or delete a child the owner does not control
// (apply.IsControlled: its controller reference, or on a target cluster through an
// Applier with ApplierOptions.Remote, its claim):
//
//   - a wanted child whose name is taken by an object without a controller (made by
//     kubectl or Helm) or with another one is refused with an error wrapping
//     apply.ErrNotControlled (a *apply.NotControlledError naming its controller), and
//     nothing is written; an unclaimed one carrying apply.AdoptAnnotation is adopted;
//   - a wanted child that is being deleted, the owner's or another's, is refused with
//     apply.ErrBeingDeleted;
//   - a child no longer wanted is deleted only when the owner controls it and it is not
//     already being deleted (that deletion is left to finish); someone else's is left in
//     place and the single form's message says so;
//   - every delete is preconditioned on the UID that was read, so an object re-created
//     in between is never removed, and is reported through apply.Record.
//
// # Why a set form
//
// A set (one VerticalPodAutoscaler per workload) is one condition over many children,
// and its prune needs the whole wanted set to know what to delete: the single form run
// once per child could neither delete a child whose workload went away nor answer one
// condition. So [ReconcileSet] validates the set, probes once, applies every desired
// child, and only then prunes.
//
// # Requests
//
// The single form, wanted: the probe (the RESTMapper answers from what it discovered
// before), one GET (apply.EnsureObject's control check) and one apply; not wanted: one
// GET, and a DELETE when the owner's child exists. The set form: the probe, one GET and
// one apply per desired child, one LIST of the kind in the owner's namespace, and a
// DELETE per pruned child. Through an apply.Applier over a manager's cached client a
// converged pass sends no request: the reads hit the informer of the child's kind and
// the converged applies are skipped. RBAC: get, list, watch, create, patch and delete
// on the child's kind; the package carries no role of its own, the flows built on it do.
package child
