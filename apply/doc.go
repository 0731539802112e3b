// Package apply is the Server-Side Apply primitive that every Ensure* helper of the
// SDK builds on.
//
// [EnsureObject] applies a desired object, built in code, under one field manager
// ([FieldManager]) with ForceOwnership, inside retry.RetryOnConflict. On every call it
// re-asserts the owner as controller reference (on a target cluster: as the claim
// described under "Target clusters"), stamps the GVK from the scheme and
// decodes the server's answer back into the object, so callers read fresh status and
// server-assigned fields without an extra Get.
//
// # What the field manager owns
//
// Server-Side Apply records as owned every field present in the applied body. Typed Go
// structs serialise zero values the builder never meant to set (metadata.creationTimestamp:
// null, status: {}, an empty spec.strategy, an empty resources block), so before applying
// EnsureObject drops:
//
//   - every non-pointer struct field whose value is the zero value (a non-nil pointer to an
//     empty struct, such as an emptyDir volume source, is kept: it carries meaning);
//   - every null value;
//   - status (status is written through the status subresource, never applied here);
//   - server-owned metadata: resourceVersion, uid, generation, managedFields,
//     creationTimestamp, deletionTimestamp, deletionGracePeriodSeconds, selfLink.
//
// As a result fields that the server defaults (a Service's clusterIP, a Deployment's
// revisionHistoryLimit) stay out of the manager's managedFields, and applying the same
// desired object again is a no-op on the server: resourceVersion does not move.
//
// One upstream exception writes once and then settles: the API server sorts the Apply
// entries of managedFields by second-resolution time and then by manager name, and its
// no-op check compares entries pairwise. When another manager applied in the same second
// as this one and sorts after it, the next converged apply (a second later) moves this
// manager's entry behind the other's and the server stores that reorder. From then on the
// order is stable and converged applies do not write.
//
// Pass a freshly built desired object on each call. An object that was read from the
// server (or filled by a previous EnsureObject call) carries the server's defaults, and
// applying it would claim them.
//
// # Creating
//
// Through an [Applier] with its skip on, an object the lookup does not find is created
// with a plain create (a POST) under [CreateFieldManager] (the field manager followed by
// [CreateSuffix], as kubectl create writes under "kubectl-create"), not by an apply: an
// apply that creates costs the API server about twice the CPU of a POST of the same
// object (it decodes the body as YAML, a second time for the duplicate-field check,
// merges it into the managed fields and reads the key from etcd before it writes), and
// the Applier's client about twice the conversions. When an object exists after all (a
// cache behind the API server, or one that holds only labelled objects), the create
// fails with AlreadyExists and changes nothing; the object is then read and checked as
// under "Ownership" and applied to. Through a plain client, or with the skip off, every
// pass applies, and so does the one that creates.
//
// The API server records every field of a create, the defaults it filled in included,
// in one Update entry of managedFields under CreateFieldManager's name. The first time
// EnsureObject applies to the object (a changed desired object, drift to repair, or the
// first pass of an Applier that does not remember the object, after a restart or when
// a shard's range moves) it first turns that entry into the field manager's Apply entry
// (one JSON patch of managedFields, conditioned on the resourceVersion, as
// k8s.io/client-go/util/csaupgrade builds it), then applies: fields the desired object
// no longer sets are removed as after any apply, and the server defaults the create
// recorded leave the field manager's entry with that apply (the API server fills them
// in again, so the object keeps their values). That first apply therefore writes twice
// even when nothing changed, once in the object's life. Until then the create's entry,
// like an Apply entry, makes another manager's Server-Side Apply of one of its fields
// fail with a conflict unless forced. A field manager whose CreateFieldManager name
// would be longer than the API server's 128 characters creates by apply.
//
// # Ownership
//
// An owner reference with controller=true makes the garbage collector delete the child
// with its owner, so making a CR the controller of an object someone else made would
// delete that object with the CR. Before applying, EnsureObject reads the existing object
// and refuses, with a *NotControlledError (errors.Is ErrNotControlled) that names the
// current controller, an object that:
//
//   - is controlled by another object (another CR, a Helm-managed parent), or
//   - has no controller at all (made by kubectl, Helm or a script),
//
// and with ErrBeingDeleted an object whose deletion has started. Nothing is written in
// either case. An object without a controller is adopted only on explicit consent: the
// annotation AdoptAnnotation (cobaltcore.c5c3.io/adopt: "true") on the existing object.
// The consent lives with the object rather than in the operator's code because only the
// object's current manager knows that handing it over is safe, a code switch would apply
// to every object of every name, and the annotation shows in kubectl what happened.
// An object without a controller that this field manager applied before (its managedFields
// hold an Apply entry of the manager) was made by this operator and lost its reference
// since: the reference is re-asserted (on the management cluster only; see "Target
// clusters").
// [CheckControlled] is the same check for helpers that delete or recreate an object they
// read, and [DeleteControlled] leaves someone else's object of the child's name alone.
// Every helper of the SDK that writes follows these rules; its doc comment links here
// instead of repeating them.
//
// # Target clusters
//
// A custom resource lives on the management cluster; its children may be written to a
// target cluster, another API server. An owner reference cannot serve there: it names
// the owner by UID, which the target cluster does not know, and its garbage collector
// deletes a dependent whose owner it cannot find. An [Applier] made with
// ApplierOptions.Remote (a [RemoteOwnership] naming the management cluster) therefore
// claims children with labels instead, and every helper of the SDK that takes that
// Applier as its client does the same, without a signature change ([SetOwnership],
// [IsControlled], [Unclaimed] and [CheckControlled] decide by the client they are
// given). Each child carries:
//
//   - [OwnerClusterLabel]: the management cluster (RemoteOwnership.ManagementCluster),
//     so two management clusters sharing a target cluster never take each other's
//     children, even for owners of the same kind, namespace and name;
//   - [OwnerKindLabel], [OwnerNamespaceLabel], [OwnerNameLabel]: the owner's
//     "Kind.group" ("Kind" for the core group), namespace and name. A value that is
//     not a valid label value (longer than 63 characters, say) is shortened
//     deterministically by [ClaimLabelValue]: its first 52 characters, trimmed to end
//     in an alphanumeric, "-" and 10 hex digits of the SHA-256 of the whole value;
//   - [OwnerAnnotation]: the owner exactly, "<Kind.group>/<namespace>/<name>", so a
//     long name survives the shortening.
//
// No owner reference is set. [ClaimOf] reads a claim back; it holds only when all four
// labels are present and agree with the annotation. The labels are part of the applied
// body, so the converged-apply skip works as on the management cluster, and a removed
// label is a drift the next apply sees.
//
// What counts as the owner's on a target cluster: an object whose claim is the owner's,
// management cluster included. An object claimed for another owner or by another
// management cluster is refused with a *NotControlledError whose Claim names that claim,
// annotated for adoption or not. An object with no claim label and no controller
// reference ([Unclaimed]: made by kubectl, or an object whose claim labels someone
// removed) is refused unless it carries AdoptAnnotation="true"; then it is adopted and
// the apply adds the claim. An object with only some of the claim labels is nobody's
// and refused until they are removed. The exception of the management cluster for an
// object without controller that this field manager applied before does not hold here:
// the operators of two management clusters sharing a target cluster write under the
// same field manager name, so such an entry does not tell whose the object was. An
// object being deleted is refused with ErrBeingDeleted, as on the management cluster.
//
// A claim names its owner, not the owner's UID, and nothing on the target cluster
// deletes the children with their owner: the operator deletes them itself when the owner
// goes (in its finalizer): it lists the owner's children of each kind with
// client.MatchingLabels(apply.ClaimLabels(remote, ownerGVK, owner)) ([ClaimLabels]) and
// deletes each with [DeleteControlled] or [DeleteObject]. An owner deleted and made again
// under the same name owns what its predecessor left.
//
// # The Applier: the operator's field manager, and converged applies that send nothing
//
// [NewApplier] wraps the manager's client once per operator (or per controller) into an
// [Applier], itself a client.Client:
//
//	applier := apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{FieldManager: "my-operator"})
//
// Every helper of the SDK takes a client.Client, so passing the Applier there is all it
// takes: the helpers keep their signatures (EnsureObject, CreateImmutableConfigMap,
// EnsureDeployment, ...) and gain the operator's field manager and the skip through
// their client argument. That is why the Applier is a client wrapper rather than a value
// each helper would take: a second parameter on every helper would break the stable
// signatures, and a client is what helpers already thread through.
//
// Field manager: where a helper names [FieldManager] (the SDK's default) or no field
// manager at all, a write through the Applier (Apply, Create, Update, Patch and status
// writes) is made under ApplierOptions.FieldManager instead, so kubectl
// --show-managed-fields tells two operators built on the SDK apart. An explicit other
// name is kept.
//
// The skip: EnsureObject through an Applier reads the existing object through the
// wrapped client (from the informer, with a manager's client) for its ownership check
// anyway. It sends nothing when all of these hold: the Applier's last apply of this
// kind/namespace/name went to the same object (same UID); the desired body, digested
// after stripping and with the owner reference and field manager, is the same as then;
// and the field manager's Apply entry in the object's managedFields is still what that
// apply left. Anything else sends a real apply: a kubectl edit or a forced apply by
// another manager of one of our fields (either moves the field out of our entry), a
// deleted or re-created child, a new desired body, a restart of the operator (the
// memory is empty). A skipped call fills obj from the cached object and reports
// [ActionSkipped].
//
// What the skip cannot see: a change to a field we own made without changing its
// owner (only possible by someone applying as our own field manager), and an informer
// that lags behind the server (the first pass after our own write usually re-applies
// once, a no-op, until the informer has the object; a drift is repaired on the first
// pass after the informer sees it). Memory: one entry of about 150 bytes per applied
// object, at most ApplierOptions.MaxTracked (DefaultMaxTracked) entries; an entry is
// dropped when the object is deleted through the Applier or its apply fails. Opt out per
// call with [WithoutSkip], or for the whole Applier with ApplierOptions.DisableSkip.
//
// # Wrapping the Applier
//
// The helpers find the Applier through the [Capable] interface ([ApplierOf]), never
// through the client's concrete type, so a client that wraps it keeps the field manager,
// the skip and the ownership mode. A struct embedding *Applier carries it as it is; any
// other wrapper (interceptor.NewClient, a fault injector, a request counter) is made to
// carry it with [Wrap]:
//
//	c := apply.Wrap(interceptor.NewClient(applier, funcs), applier)
//
// Every call then goes through the wrapper; a wrapper that does not carry the Applier
// gets the SDK's defaults (FieldManager, no skip, owner references).
//
// # Cache memory that does not grow with the cluster
//
// Every object an Applier creates or applies carries [ManagedByLabel] set to its field
// manager. [CacheOptions] makes the manager cache only the Secrets and ConfigMaps that
// carry it, so the operator does not hold every Secret and ConfigMap of the cluster;
// with ApplierOptions.APIReader set, a Get of one the operator did not write (a user's
// Secret, an override ConfigMap) misses the cache and is read from the API server (one
// GET), never taken for missing. EnsureObject of a Secret or ConfigMap the cache does
// not hold, and that the Applier (its skip on) does not remember applying, skips that
// GET: it sends the create ("Creating") at once, which creates the object when there is
// none and fails with AlreadyExists, unwritten, on an existing one; only then is the object read
// through the APIReader and checked as under "Ownership" (refused, adopted or applied
// to). Creating costs one POST, as for any other kind; an existing object the cache
// does not hold costs the failed POST, the GET, and the apply when it is ours. A
// mutating admission webhook sees the failed create as a create request that is then
// refused. A List of Secrets or ConfigMaps through such a cache
// sees only the labelled ones: the SDK lists them only to prune what it created itself.
// Pods and ControllerRevisions are better not cached at all (reconcile.UncachedObjects).
//
// # Writes as data
//
// [WithWrites] returns a context that collects, as [Write] values, what every SDK write
// made with it did: [ActionCreated], [ActionConfigured] (with the applied field paths
// whose value changed), [ActionUnchanged], [ActionSkipped] or [ActionDeleted]. It is the
// one shape in which the SDK hands back its writes, whatever the helper returns, so a
// reconciler can log, count and emit events ("Deployment ns/name configured") without a
// Get. Helpers that write without EnsureObject report through [Record].
//
// # Removing children
//
// [DeleteControlled] is the counterpart for optional children the owner no longer
// wants: it deletes the object only when the owner is its controller (someone else's
// object of the same name is left alone and reported), tolerates a missing object or an
// unserved kind, and preconditions the delete on the UID it read. [Validate] is the
// shared pre-flight check of owner and object that helpers run before any API call.
//
// # Footprint
//
// Per helper: what it reads and writes, which reads start an informer when the client is
// a manager's cached client (a typed Get or List through mgr.GetClient() does; a read as
// unstructured, or through an APIReader, does not), and the RBAC verbs it needs. The
// package has no rbac.go: the kinds are the caller's, so the verbs go on the kinds the
// caller passes, in the caller's own RBAC markers.
//
//   - [EnsureObject]: gets the object (the control check; informer: that kind, unless obj
//     is unstructured) and applies it (a PATCH of type apply). Through an [Applier] a
//     converged apply is skipped, a missing object is created by a POST, and the first
//     apply to an object so created is preceded by a JSON patch of its managedFields
//     ("Creating"). RBAC on the kind: get, list, watch, create, patch.
//   - [DeleteControlled]: gets the object (informer: that kind) and deletes it when the
//     owner controls it. RBAC: get, list, watch, delete.
//   - [DeleteObject]: deletes the object; no read. RBAC: delete.
//   - [Applier]: adds no request of its own but one: with ApplierOptions.APIReader set, a
//     Get that misses a label-filtered cache ([CacheOptions]) is read again through the
//     APIReader (no informer). EnsureObject sends that read only after its create found
//     an object ("Cache memory that does not grow with the cluster"), so creating a
//     Secret or ConfigMap costs the POST alone. [CacheOptions] restricts the
//     Secret and ConfigMap informers to objects carrying [ManagedByLabel].
//   - [CheckControlled], [CheckScheme], [Validate], [ValidateOwner], [WithWrites],
//     [Record], [WithoutSkip], [FieldManagerFor], [SetOwnership], [IsControlled],
//     [Unclaimed], [ClaimLabels], [ClaimOf], [ClaimLabelValue], [OwnershipFields],
//     [RemoteOwnership.Validate]: no API call.
//
// A converged pass of EnsureObject costs one GET and one no-op apply through a plain
// client, and no request through an Applier over a manager's cached client (see "The
// Applier" above).
package apply
