// Package credential creates a credential Secret once — from its backup when one holds
// the credential, otherwise with a random value from crypto/rand — never writes an
// existing Secret, and never creates one silently.
//
// It is the generate-once path that the SDK's feature packages share without depending
// on each other: database.ReconcileProvision generates its password Secret through
// [Ensure], and [Random] is the generator of every SDK credential. It knows nothing of
// External Secrets, MariaDB or any other API beyond Secrets and Events: where a backup
// lives is a [Restorer]'s business, and what still uses a lost credential is
// Secret.InUse's, both supplied by the caller (a reconciler composes them, for example
// a Restorer over secrets.CheckRestore).
//
// # Once, and never silently
//
// [Ensure] reads the Secret on every call. An existing Secret is returned as read and
// never written. A missing one is created:
//
//  1. with the credential its backup holds, when Secret.Restore finds one
//     ([OutcomeRestored], Event [ReasonRestored]): losing the Secret does not change
//     the credential;
//  2. not at all while the backup may still deliver it ([OutcomeRestorePending]): a new
//     value generated then would fork the credential from the one the backup holds;
//  3. otherwise with a new random value: [OutcomeGenerated] (Event [ReasonGenerated])
//     on a first install, [OutcomeRegenerated] (a Warning Event, [ReasonRegenerated])
//     when Secret.InUse reports that something still holds the lost credential.
//
// Every creation is logged through the context's logger ("generated credential
// Secret", "regenerated credential Secret" or "restored credential Secret", with the
// Secret's namespace/name and data key), recorded as an Event on the owner (on the
// Secret itself with a nil owner) when Secret.Recorder is set, and reported through
// apply.Record (apply.ActionCreated). A pending restore is logged and records no Event.
// No error, log line, Event or [Result] carries a credential.
//
// # What Ensure decides, and when
//
// The decision is read from the API server on each call, not remembered: a Secret
// deleted by someone else is found missing on the next call. An existing Secret is
// returned as read, whatever it holds and whoever controls it: whether it is usable
// (its data key, its controller, a deletion in progress) is the caller's to judge. A
// created Secret gets the owner as its owner (apply.SetOwnership: a controller
// reference, or through an Applier for a target cluster its claim; none with a nil
// owner), Secret.Labels and type Opaque; a generated value is Secret.Length characters
// of [Alphabet] from crypto/rand. When the create meets AlreadyExists (another writer
// won, or the read came from a cache that had not seen the Secret), the Secret is read
// again past the cache and returned as [OutcomeExisting], and nothing is reported. A
// failed read, Restore, InUse or create returns the error, naming the Secret, and
// reports no credential written; a nil scheme (apply.ErrNilScheme), an owner never
// persisted (apply.ErrOwnerNotPersisted) and invalid input ([ErrInvalidSecret]) are
// refused before any API call.
//
// # Footprint
//
// [Ensure] gets the Secret through the client it is given (a manager's cached client
// serves it from the Secrets informer), creates it when it is missing, and after an
// AlreadyExists reads it again as unstructured (past the cache, no informer); a
// Restorer and InUse make their own reads. RBAC: secrets get, list, watch, create; with
// a Recorder, events (events.k8s.io) create, patch. The calling package's ClusterRole
// grants them (rbac/database/role.yaml for database.ReconcileProvision). A call that
// finds the Secret costs one GET, none through a cached client. [Random] makes no API
// call.
package credential
