// Package secrets connects operators built with the SDK to External Secrets Operator
// (ESO) and to the Kubernetes Secrets ESO writes.
//
// # Gates
//
// A reconciler's Secrets step reads its credentials from Secrets that ESO syncs from a
// backend (OpenBao). It gates, in order, on:
//
//  1. the secret store the CR selects: [GateStoreReady] (store-ref aware, with the
//     reasons [ReasonSecretStoreNotReady] and [ReasonClusterSecretStoreUnsupported]),
//     or the primitives [IsStoreRefReady], [IsClusterSecretStoreReady] and
//     [IsSecretStoreReady];
//  2. the ExternalSecret: [WaitForExternalSecret], a point-in-time tri-state (not found,
//     not synced, Ready). Ready counts only for the current spec: ESO writes the
//     version it synced to status.syncedResourceVersion as "<generation>-<hash of
//     labels and annotations>", and a generation other than metadata.generation (the
//     spec changed since) reads as not synced;
//  3. the synced Secret and its keys: [IsSecretReady], then [GetSecretValue].
//
// Each gate reports readiness as data; the caller sets its condition and requeues
// after [PollInterval] (15 s).
//
// # Store selection
//
// A CR may carry an optional spec.secretStoreRef (commonv1.SecretStoreRefSpec from
// github.com/c5c3/reconciler-sdk/api/v1). [EffectiveStoreRef] resolves it, defaulting
// to the shared ClusterSecretStore [OpenBaoClusterStoreName]; [ESOSecretStoreRef] and
// [PushSecretStoreRefs] turn the result into the store references of an ExternalSecret
// and a PushSecret. [StoreRefFanOut] maps a ClusterSecretStore or SecretStore event to
// the CRs whose effective reference selects that store, so a store outage or recovery
// retriggers exactly those CRs.
//
// An operator that runs namespace-scoped (--namespace) cannot read a cluster-scoped
// kind; [GateStoreReady] refuses a ClusterSecretStore for it without any API call and
// the operator registers no ClusterSecretStore watch.
//
// # Writing
//
// [EnsurePushSecret] applies a PushSecret through Server-Side Apply (package apply):
// ESO's server-side defaults stay unclaimed and a converged PushSecret is not
// rewritten. Neither it nor [EnsureGeneratedSecret] takes over an object the owner does
// not control: an existing PushSecret or Secret without a controller (made by kubectl or
// Helm) is refused with an *apply.NotControlledError unless it carries
// apply.AdoptAnnotation="true", one controlled by another object is always refused
// (the error names the controller), and one being deleted is refused with
// apply.ErrBeingDeleted; nothing is created over it.
//
// Pass an apply.Applier (over the manager's cached client) as the client and the writes
// carry the operator's field manager; every write is reported through apply.Record, so
// a reconciler that collects its writes with apply.WithWrites sees the Secret created or
// patched and the PushSecret applied. A converged pass — the generated Secret holds its
// credential, the PushSecret is unchanged — writes nothing, and through an
// apply.Applier over a manager's cached client sends no request at all. A manager that
// reads Secrets past its cache, as reconcile.UncachedObjects recommends (caching them
// would hold every Secret of the cluster in memory), pays one GET per
// [EnsureGeneratedSecret] call, and one per [IsSecretReady] or [GetSecretValue] call.
//
// # Generated credentials
//
// [EnsureGeneratedSecret] creates a random credential Secret once, with crypto/rand,
// and never regenerates it: the value survives every later pass, a controller restart
// and the loss of any ExternalSecret that reads it back. [GeneratedPushSecret] builds
// the PushSecret that pushes it to the backend, and a second Secret, written by an
// ExternalSecret from the backend, is what workloads mount and what
// GeneratedSecret.RestoreFrom names: when the generated Secret is lost, its value is
// restored from there.
//
// The PushSecret of a generated credential has updatePolicy IfNotExists: ESO writes it
// only where the backend holds nothing (ESO's OpenBao/Vault provider checks the
// property before it writes), so a credential generated when it should not have been
// never replaces the one the backend holds, and the ExternalSecret brings the backend's
// value back. Its deletionPolicy is None: deleting the PushSecret, or its namespace,
// leaves the credential in the backend for a later restore.
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
// answers Confirmed.
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
// generated value, such as a key repository:
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
// ClusterSecretStore; .../secrets/eso/v1alpha1 for PushSecret, an unstable ESO API).
// Register both AddToScheme functions in the manager's scheme.
//
// # Footprint
//
// Per helper: what it reads and writes, which reads start an informer when the client is
// a manager's cached client (a typed Get or List through mgr.GetClient() does; a read as
// unstructured, or through an APIReader, does not), and the RBAC verbs it needs, as
// the +kubebuilder:rbac markers in rbac.go grant them (rbac/secrets/role.yaml). list and
// watch come with every get: a cached read lists and watches the kind.
//
//   - [GateStoreReady], [IsStoreRefReady]: get the selected SecretStore or
//     ClusterSecretStore (informer: that kind), nothing for a ClusterSecretStore refused in
//     namespace-scoped mode. [IsClusterSecretStoreReady], [IsSecretStoreReady]: the same
//     for one kind. RBAC: external-secrets.io secretstores, clustersecretstores get, list,
//     watch.
//   - [WaitForExternalSecret]: gets the ExternalSecret (informer: ExternalSecrets). RBAC:
//     external-secrets.io externalsecrets get, list, watch.
//   - [IsSecretReady], [GetSecretValue]: get the Secret (informer: Secrets). RBAC: secrets
//     get, list, watch.
//   - [EnsureGeneratedSecret]: gets the Secret (informer: Secrets); with RestoreFrom, lists
//     the ExternalSecrets of RestoreFrom's namespace (informer: ExternalSecrets) and gets
//     RestoreFrom; creates the Secret, re-reads it as unstructured after AlreadyExists (no
//     informer), patches it to add the key or to adopt it. RBAC: secrets get, list, watch,
//     create, patch; externalsecrets list, watch.
//   - [EnsurePushSecret]: gets the PushSecret (the control check; informer: PushSecrets)
//     and applies it. RBAC: external-secrets.io pushsecrets get, list, watch, create,
//     patch.
//   - [ConfirmPush]: gets the PushSecret (its stamp and status; informer: PushSecrets),
//     then does what EnsurePushSecret does. RBAC: the same as EnsurePushSecret.
//     [PushConfirmationOf]: no API call.
//   - [StoreRefFanOut]: its map function lists the operator's own CR kind through the
//     reader it is given (with mgr.GetClient(), the CR's informer, which the controller
//     has anyway). The CR's RBAC is the operator's, not this package's.
//   - [EffectiveStoreRef], [ESOSecretStoreRef], [PushSecretStoreRefs],
//     [GeneratedPushSecret], [DefaultGeneratedSecret]: no API call.
//
// A converged pass costs what "Writing" says: nothing through an apply.Applier over a
// manager's cached client, one GET per Secret read when Secrets are read past the cache.
package secrets
