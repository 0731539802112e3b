// Package secrets connects operators built with the SDK to External Secrets Operator
// (ESO) and to the Kubernetes Secrets ESO writes.
//
// # The Secrets flow
//
// [Sync] is the Secrets step of a CR that reads values from a secret backend. It gates
// on the store the CR selects ([StoreGate]), applies the CR's ExternalSecret (owned by
// the CR, through apply.EnsureObject, with the refusals of "Writing"), waits for ESO to
// sync it and reads the values from the Secret ESO writes. Its [Synced] answer is a
// reconcile.Outcome for SyncParams.ConditionType plus the values:
//
//   - the store is missing, not Ready or refused: the store gate's False condition and
//     a requeue after [PollInterval];
//   - not synced yet (the ExternalSecret not Ready for its current generation, the
//     Secret missing, a key absent or empty): False with the waiting reason, a message
//     naming the ExternalSecret and the remote keys, a requeue after PollInterval;
//   - a failed call, or an ExternalSecret refused: False with the error reason and the
//     error's text (which names objects, never a value), and the error;
//   - synced: True with the ready reason, Synced.Values and Synced.Digest.
//
// The operator owns the wording: SyncParams overrides each reason and the ready message;
// the defaults are [ReasonSecretsAvailable], [ReasonWaitingForSecret] and
// [ReasonSecretsError]. The Secret ESO writes always carries apply.ManagedByLabel set to
// the client's field manager (apply.FieldManagerFor), merged over SyncParams.Labels, so
// that a cache built with apply.CacheOptions holds it and a Secret watch sees it change.
// [Digest] turns a value into a pod-template annotation that rolls the pods when the
// value changes and cannot be turned back into it.
//
// # Gates
//
// The steps below Sync, for a flow of one's own. In order:
//
//  1. the secret store: [StoreGate] (an outcome), [GateStoreReady] (the same, written
//     into a condition slice), or the primitives [IsStoreRefReady],
//     [IsClusterSecretStoreReady] and [IsSecretStoreReady]. A missing or not-Ready store
//     gives [ReasonSecretStoreNotReady]; a namespace-scoped operator (--namespace) cannot
//     read a cluster-scoped kind, so a ClusterSecretStore is refused without any API
//     call, with [ReasonClusterSecretStoreUnsupported]; the refusal clears once the CR
//     selects a SecretStore. A store gate covers a backend outage while each
//     ExternalSecret still reports the Ready of its last successful sync;
//  2. the ExternalSecret: [WaitForExternalSecret], a point-in-time tri-state (not found,
//     not synced, Ready). Ready counts only for the current spec: ESO writes the
//     version it synced to status.syncedResourceVersion as "<generation>-<hash of
//     labels and annotations>", and a generation other than metadata.generation (the
//     spec changed since), or a missing or malformed value, reads as not synced;
//  3. the synced Secret and its keys: [IsSecretReady], then [GetSecretValue].
//
// A gate that did not pass is retried after [PollInterval] (15 s).
//
// # Store selection
//
// A CR may carry an optional spec.secretStoreRef (commonv1.SecretStoreRefSpec from
// github.com/c5c3/reconciler-sdk/api/v1). [EffectiveStoreRef] resolves it, defaulting
// to the shared ClusterSecretStore [OpenBaoClusterStoreName]; [ESOSecretStoreRef] and
// [PushSecretStoreRefs] turn the result into the store references of an ExternalSecret
// and a PushSecret.
//
// # Watches
//
// A store outage or recovery should retrigger exactly the CRs that select that store,
// and a changed Secret exactly the CRs that read it. [StoreRefFanOut] maps a store event
// to the CRs whose effective reference selects it; [SecretRefFanOut] maps a Secret event
// to the CRs whose [SecretRefIndex] ([IndexSecretRefs]) names it. The store watches are
// on ClusterSecretStore, except for a namespace-scoped operator, and on SecretStore; the
// Secret watch is on Secrets.
//
// [WatchStores] and [WatchSecrets] add them to a single-cluster operator's plain
// controller builder. [AddStoreWatches] and [AddSecretWatches] add them to a
// multicluster builder through multicluster.AddInputWatch: an event on the management
// cluster enqueues the CRs without a target cluster, one on a target cluster the CRs
// that name that cluster. Only the Secrets the cache holds raise events: with
// apply.CacheOptions, those that carry the operator's managed-by label, as the Secrets
// of Sync do.
// [AddCRInputWatches] adds them all for one CR kind ([CRInputs]).
//
// # Reads, caches and requests
//
// Every helper reads through the client it is given. With the recommended setup — an
// apply.Applier with ApplierOptions.APIReader over a manager whose cache is
// apply.CacheOptions — a Secret that carries apply.ManagedByLabel with the operator's
// field manager (the Secrets Sync has ESO write, those EnsureGeneratedSecret creates
// through the Applier) is served from the cache: a converged pass that reads it sends
// no request. A Secret without that label (a user's) is not in the cache, and each read
// of it costs one GET through the APIReader, on every pass. A manager that reads Secrets
// past its cache (client.CacheOptions.DisableFor; reconcile.UncachedObjects says when)
// pays one GET per Secret read. The other kinds come from informers.
//
// # Writing
//
// [Sync] (the ExternalSecret), [EnsurePushSecret] and [ConfirmPush] apply through
// Server-Side Apply (apply.EnsureObject): the server's defaults stay unclaimed and a
// converged object is not rewritten. [EnsureGeneratedSecret] creates its Secret once and
// patches it only to add a missing key or to adopt it. None of them takes over an object
// the owner does not control: one without a controller (made by kubectl or Helm) is
// refused with an *apply.NotControlledError (errors.Is apply.ErrNotControlled) unless it
// carries apply.AdoptAnnotation="true" and is adopted (Sync applies to it then); one
// controlled by another object is always refused, the error naming the controller; one
// being deleted is refused with apply.ErrBeingDeleted. Nothing is created over it.
//
// Through an apply.Applier every write carries the operator's field manager, and every
// write is reported through apply.Record, so a reconciler that collects its writes with
// apply.WithWrites sees the ExternalSecret, the Secret or the PushSecret created or
// changed. A converged pass writes nothing.
//
// # Generated credentials
//
// [EnsureGeneratedSecret] creates a random credential Secret once, with crypto/rand,
// and never regenerates it: the value survives every later pass, a controller restart
// and the loss of any ExternalSecret that reads it back. [GeneratedPushSecret] builds
// the PushSecret that pushes it to the backend, and a second Secret, written by an
// ExternalSecret from the backend, is what workloads mount and what
// GeneratedSecret.RestoreFrom names: when the generated Secret is lost, its value is
// restored from there. Keep the generated Secret out of every ExternalSecret's target:
// an ExternalSecret with creationPolicy Owner deletes its target with it.
//
// EnsureGeneratedSecret leaves a Secret that holds the key alone ([SecretKept]); creates
// a missing one with owner as its owner (apply.SetOwnership), the credential restored
// ([SecretRestored]) or generated ([SecretGenerated]); adds a missing key alone with an
// optimistic-lock patch, keeping the others; and writes nothing while a restore is
// pending ([SecretRestorePending]: the caller reports [ReasonRestorePending] and
// requeues after PollInterval). With a nil owner the Secret has no owner, an unclaimed
// one is used and one with a controller is refused. Two passes racing to create the
// Secret end with the winner's value: every read after a lost race (AlreadyExists, a
// Conflict) goes past the cache, as unstructured, so a lagging cache can neither fail
// the call nor generate twice. A failed read is an error, never a new credential.
// The create is reported as apply.ActionCreated, a patch as apply.ActionConfigured with
// the fields data.<DataKey> (a key added) and apply.OwnershipFields (an adoption).
//
// The PushSecret of a generated credential has updatePolicy IfNotExists: ESO writes it
// only where the backend holds nothing (ESO's OpenBao/Vault provider checks the
// property before it writes), so a credential generated when it should not have been
// never replaces the one the backend holds, and the ExternalSecret brings the backend's
// value back. Its deletionPolicy is None: deleting the PushSecret, or its namespace,
// leaves the credential in the backend for a later restore. The SDK owns both fields,
// so an edit of either is reverted; a changed credential is therefore not pushed:
// rotate it in the backend. Any other PushSecret given to EnsurePushSecret should leave
// spec.updatePolicy and spec.refreshInterval unset (ESO's defaults stay unclaimed) and
// be built afresh on every pass.
//
// # Confirming a push
//
// An operator that must not use a credential before the backend holds it (a rotated
// password that only a backup can bring back) calls [ConfirmPush] on every pass with
// the PushSecret that backs the Secret up and the Secret as it read it. ConfirmPush
// applies the PushSecret through [EnsurePushSecret], with its control checks, stamped
// with the Secret's resourceVersion ([PushOfVersionAnnotation]) and with the
// PushSecret's status.syncedResourceVersion at the moment that version was first
// stamped ([PushSyncedBeforeAnnotation]), and answers a [PushConfirmation]: Confirmed
// once ESO has recorded a push of that version or a later one, otherwise a Pending
// clause for the caller's condition message. [PushConfirmationOf] is the same
// judgement of a PushSecret already read, without an API call.
//
// It rests on how ESO (v0.20) records a push. After a successful push ESO sets
// condition Ready True with reason Synced, refreshTime, and status.syncedResourceVersion
// to "<metadata.generation>-<hash of the labels and annotations it read>"; a failed push
// sets Ready False with reason Errored and leaves status.syncedResourceVersion as it
// was, so that field changes only through a successful push. ESO pushes again whenever
// the generation, a label or an annotation differs from what status.syncedResourceVersion
// records, so a new stamp makes it push at once, whatever spec.refreshInterval says, and
// the push reads the Secret after it read the stamp. A push is therefore taken as a
// push of the stamped version when the condition is Ready True with reason Synced,
// status.syncedResourceVersion names metadata.generation (a spec changed since, such as
// another store or remote key, waits for its own push), and it differs from the value
// recorded in PushSyncedBeforeAnnotation. The pass that stamps a new version never
// answers Confirmed; a stamp of an unchanged version is kept, so a converged pass
// writes nothing.
//
// Two limits follow from reading ESO's status rather than the backend: a push ESO had
// started before the stamp and records after it also changes
// status.syncedResourceVersion, and ESO reads the Secret through its own cache. Both
// leave a window of one push while the Secret changes; ESO's next push of the
// PushSecret, which the stamp's metadata still calls for, writes the current Secret.
//
// # First install or pending restore
//
// When neither the generated Secret nor RestoreFrom holds the credential, the backend
// may still hold it (a namespace re-created from a backup, before ESO has synced) or
// not (a first install). EnsureGeneratedSecret tells the two apart from the
// ExternalSecrets in RestoreFrom's namespace that write RestoreFrom (spec.target.name,
// or the ExternalSecret's own name when that is empty; creationPolicy other than None;
// not being deleted), read before RestoreFrom itself and both past the informer cache,
// so that an ExternalSecret created earlier in the same pass counts. [CheckRestore]
// answers the same question for callers that store something other than one
// generated value, such as a key repository; it is meant for the rare pass that finds
// a credential missing:
//
//   - None exists: nothing can restore the credential. It is generated.
//   - Every one has answered for its current spec, since it was created, that the
//     backend does not hold the key: Ready=True, syncedResourceVersion at
//     metadata.generation, refreshTime not before creationTimestamp (a status restored
//     with the object proves nothing), and either reason SecretDeleted (ESO removed
//     the target) or reason SecretSynced with RestoreFrom present but without the key.
//     It is generated.
//   - Otherwise nothing is written: no status yet, Ready=False, a status of an older
//     generation or from before the object was created, SecretSynced while RestoreFrom
//     does not exist (it was deleted after the sync and ESO will write it again),
//     another reason such as SecretMissing. The outcome is [SecretRestorePending]; the
//     caller reports [ReasonRestorePending] and requeues after [PollInterval].
//
// How ESO (v0.20) reports a key the backend does not hold depends on the
// ExternalSecret's spec.target.deletionPolicy. The provider answers "Secret does not
// exist" (ESO's NoSecretError). Under Retain, ESO's default, that fails the sync:
// Ready=False, reason SecretSyncedError, message "could not get secret data from
// provider", the same condition as an unreachable backend or a denied read, so it is
// taken as pending. Under Delete (which ESO allows only with creationPolicy Owner) ESO
// skips the missing key, deletes the target Secret and reports Ready=True with reason
// SecretDeleted; under Merge it writes the target without the key and reports
// Ready=True, SecretSynced. Hence:
//
//   - Give the ExternalSecret that writes RestoreFrom deletionPolicy Delete (or Merge).
//     The first install then needs no manual step, whatever the order of the steps:
//     ESO reports the missing key, the credential is generated and pushed, and the
//     ExternalSecret writes RestoreFrom at its next refresh.
//   - With Retain, create that ExternalSecret only after EnsureGeneratedSecret returned
//     a ready outcome. A Retain ExternalSecret that exists while the backend lacks the
//     key keeps the step pending until the key is written to the backend or the policy
//     is changed.
//   - RestoreFrom appears after the push only when the ExternalSecret fetches again:
//     keep spec.refreshInterval short (ESO's default is 1h) and do not use
//     refreshPolicy CreatedOnce, which never fetches again.
//
// EnsureGeneratedSecret reads through the client it is given. A manager's default
// client serves each kind from its own informer, and informers may lag behind each
// other; a client that reads from the API server (client.New, or cache options that
// leave Secrets and ExternalSecrets uncached) keeps ESO's order, target Secret first,
// then the status. Otherwise the IfNotExists push covers that window.
//
// # Secret values
//
// No value read or generated by this package appears in an error, a condition message
// or a log line: errors and logs name Secrets by namespace/name and data key only.
//
// # ESO types
//
// ESO's own Go module no longer compiles against the controller-runtime the SDK pins,
// so the package uses the SDK's typed mirror of the ESO kinds
// (github.com/c5c3/reconciler-sdk/secrets/eso/v1 for ExternalSecret, SecretStore and
// ClusterSecretStore; .../secrets/eso/v1alpha1 for PushSecret, an unstable ESO API that
// may change between ESO releases). Register both AddToScheme functions in the manager's
// scheme.
//
// # Footprint
//
// Per helper: what it reads and writes, which reads start an informer when the client is
// a manager's cached client (a typed Get or List through mgr.GetClient() does; a read as
// unstructured, or through an APIReader, does not), and the RBAC verbs it needs, as
// the +kubebuilder:rbac markers in rbac.go grant them (rbac/secrets/role.yaml). list and
// watch come with every get: a cached read lists and watches the kind.
//
//   - [Sync]: what StoreGate reads; gets and applies the ExternalSecret (the control
//     check, then the wait; informer: ExternalSecrets); gets the Secret (informer:
//     Secrets). RBAC: the store kinds as below; external-secrets.io externalsecrets get,
//     list, watch, create, patch; secrets get, list, watch.
//   - [StoreGate], [GateStoreReady], [IsStoreRefReady]: get the selected SecretStore or
//     ClusterSecretStore (informer: that kind), nothing for a ClusterSecretStore refused in
//     namespace-scoped mode. [IsClusterSecretStoreReady], [IsSecretStoreReady]: the same
//     for one kind. RBAC: external-secrets.io secretstores, clustersecretstores get, list,
//     watch.
//   - [WaitForExternalSecret]: gets the ExternalSecret (informer: ExternalSecrets). RBAC:
//     external-secrets.io externalsecrets get, list, watch.
//   - [IsSecretReady], [GetSecretValue]: get the Secret (informer: Secrets). RBAC: secrets
//     get, list, watch.
//   - [EnsureGeneratedSecret]: gets the Secret (informer: Secrets); with RestoreFrom, lists
//     the ExternalSecrets of RestoreFrom's namespace and gets RestoreFrom, both past the
//     cache ([CheckRestore]; no informer); creates the Secret, re-reads it as
//     unstructured after AlreadyExists (no informer), patches it to add the key or to
//     adopt it. RBAC: secrets get, list, watch, create, patch; externalsecrets list, watch.
//   - [EnsurePushSecret]: gets the PushSecret (the control check; informer: PushSecrets)
//     and applies it. RBAC: external-secrets.io pushsecrets get, list, watch, create,
//     patch.
//   - [ConfirmPush]: gets the PushSecret (its stamp and status; informer: PushSecrets),
//     then does what EnsurePushSecret does. RBAC: the same as EnsurePushSecret.
//     [PushConfirmationOf]: no API call.
//   - [StoreRefFanOut], [SecretRefFanOut]: their map functions list the operator's own
//     CR kind through the reader they are given (with mgr.GetClient(), the CR's
//     informer, which the controller has anyway). The CR's RBAC is the operator's.
//   - [WatchStores], [WatchSecrets], [AddStoreWatches], [AddSecretWatches]: informers on
//     the watched kinds. RBAC: get, list, watch on them, as above.
//   - [EffectiveStoreRef], [ESOSecretStoreRef], [PushSecretStoreRefs],
//     [GeneratedPushSecret], [DefaultGeneratedSecret], [Digest]: no API call.
//
// A converged pass costs what "Reads, caches and requests" says: through the
// recommended setup nothing for the Secrets the operator labelled, one GET per pass for
// each Secret it reads that does not carry its label.
package secrets
