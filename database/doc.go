// Package database provisions MariaDB databases for operators built with the SDK,
// through mariadb-operator's custom resources (k8s.mariadb.com/v1alpha1 Database, User
// and Grant, typed from github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1),
// writes the connection Secret a client reads the database URL from, and runs the
// schema-sync Jobs that follow.
//
// # Ensure
//
// [EnsureDatabase] and [EnsureDatabaseUser] apply the desired objects through
// Server-Side Apply ([apply.EnsureObject] under [apply.FieldManager]) with the owner as
// controller, and report readiness as data: (true, nil) once mariadb-operator has set
// the Ready condition True for the current spec — on the Database, or on both the User
// and the Grant — (false, nil) before, (false, err) on failure (see Readiness). The
// field manager owns only what the builder sets, so server defaults (a Database's
// characterSet and collate, a User's maxUserConnections) are kept and a converged
// object is not rewritten: its resourceVersion does not move. EnsureDatabaseUser
// applies the User first and does not attempt the Grant when the User fails.
//
// # Readiness
//
// Ready means a Ready condition with status True that describes the object's current
// spec. A Ready condition whose observedGeneration is below metadata.generation was
// written for an older spec — right after a change, the operator has not acted on it
// yet — and counts as not ready; so does a MariaDB server in that state, for the gate
// of [ProvisionFlow]. mariadb-operator v25 leaves observedGeneration unset (0) on
// its conditions, and such a condition cannot be dated: it is taken at face value, so
// right after a spec change a Database, User or MariaDB it manages still counts as
// ready on the Ready=True of its previous spec. For a Grant the operator's own record
// narrows that gap: a Grant whose
// status.currentPrivileges (the privileges mariadb-operator last granted) differ from
// spec.privileges is not ready, whatever its condition says. The not-ready message
// names the generations or the privileges that differ.
//
// # Objects of others
//
// No helper takes over, writes over or deletes an object the owner does not control.
// An existing Database, User, Grant or connection Secret of the desired name that has
// no controller (made by kubectl or Helm) or another one is refused by
// [apply.EnsureObject] with an error wrapping apply.ErrNotControlled that names its
// controller, and one that is being deleted with apply.ErrBeingDeleted; the object is
// left as it is and the flows write nothing after it. The password Secret is the one exception by design: an existing
// Secret — synced by an ExternalSecret (which controls it), written by hand, or
// generated earlier — is only ever read, never written or adopted, and nothing is
// generated or reported for it. A password Secret that is being deleted is waited for
// ([ReasonPasswordSecretNotReady]): its password is going away, so the User is not
// applied with it and nothing is created over it until it is gone. A sync Job of the
// desired name that the owner does not control is refused by [job.RunJob] and never
// deleted or re-run.
//
// Every exported function refuses a nil *runtime.Scheme with an error wrapping
// apply.ErrNilScheme that names the object, before any API call.
//
// One field of the upstream Go types cannot be left to the server: MariaDBRef.WaitForIt
// has no omitempty, so the zero value false is applied over the CRD default true. Set
// it explicitly.
//
// # Flows
//
// [ProvisionFlow] and [SyncJobsFlow] are the package's steps in the [reconcile.Outcome]
// shape, under its rules: the [ConditionType] condition without observedGeneration, a
// requeue after [PollInterval] while something is not ready, never a requeue together
// with an error. [ReconcileProvision] and [ReconcileSyncJobs] are the same flows
// answering (condition, result, error). A reconciler's database step runs them in turn:
//
//	out, err := database.ProvisionFlow(ctx, c, scheme, app, database.ProvisionParams{
//		Database: db, User: user, Grant: grant,
//		GeneratePassword: true, Restore: restore, Recorder: r.Recorder, // see "Generated passwords"
//		Connection: &database.ConnectionSecretParams{Name: app.Name + "-db-connection"},
//	})
//	if res, err := reconcile.Settle(app, out.Outcome, err); err != nil || !res.IsZero() {
//		return res, err
//	}
//	synced, err := database.SyncJobsFlow(ctx, c, scheme, app, database.SyncJob{Job: dbSyncJob(app)})
//	return reconcile.Settle(app, synced, err)
//
// ProvisionFlow goes through these states, each not-ready one a False condition with
// its own reason and a requeue; the True reason is [ReasonDatabaseProvisioned]:
//
//  1. The MariaDB server Database.spec.mariaDbRef names must exist
//     ([ReasonMariaDBNotFound]) and be Ready ([ReasonMariaDBNotReady]); nothing is
//     applied before.
//  2. The Database is applied ([EnsureDatabase]) and must be Ready
//     ([ReasonDatabaseNotReady]).
//  3. The password Secret the User references must hold a non-empty value under its key
//     and not be in deletion ([ReasonPasswordSecretNotReady]); with GeneratePassword a
//     missing one is created first, unless its backup may still deliver the password
//     ([ReasonPasswordRestorePending]). An existing Secret is only read, whoever controls it.
//  4. The User and the Grant are applied ([EnsureDatabaseUser]); the User must be Ready
//     ([ReasonUserNotReady]), then the Grant ([ReasonGrantNotReady]).
//  5. With ProvisionParams.Connection, the connection Secret is applied
//     ([EnsureConnectionSecret]) with the password of step 3; Provisioned.Connection
//     carries its version.
//
// Invalid parameters are refused with [ErrInvalidParams], and a nil scheme with an error
// wrapping apply.ErrNilScheme, before any API call. API failures, and objects the owner
// does not control ("Objects of others"), return the error with a zero Condition, so the
// caller keeps the condition it has. Empty namespaces are the owner's.
//
// SyncJobsFlow runs one or more Jobs in order through [job.RunJob] (or
// [job.RunJobWithKey] when a [SyncJob] carries a re-run key); a Job starts only once the
// one before it completed, so schema steps such as expand, migrate and contract keep
// their order. [ReasonDBSyncInProgress] with a requeue while a Job runs, is created, or
// is re-created for a new re-run key; [ReasonDatabaseSynced] once all have completed;
// [ReasonDBSyncFailed] with an error wrapping [job.ErrJobFailed], marked terminal
// (controller-runtime's reconcile.TerminalError), when one failed permanently: nothing
// requeues until its pod template or re-run key changes. No Job, or a nil one, is
// refused with [ErrInvalidParams]; API failures and Jobs job.RunJob refuses (one the
// owner does not control is never deleted or re-run) return a zero Condition.
//
// # Connection URL and Secret
//
// [ConnectionURL] renders a [Connection] and a password into the SQLAlchemy URL
// oslo.db reads from [database] connection. User and password are percent-encoded
// except for ASCII letters, digits and "-._~" (SQLAlchemy decodes them again), the TLS
// file paths are query-encoded and an IPv6 host is bracketed, so the URL never carries
// "$" (which oslo.config would substitute), "@", "/", "?" or a newline from the input.
// Host must be an IP address or a DNS name, Port within 1 to 65535, the TLS paths
// absolute; every problem is reported at once, each naming its field.
//
// The URL holds the password, so it lives only in a Secret: [EnsureConnectionSecret]
// applies one (ConnectionSecretParams: the URL under [ConnectionDataKey], optionally
// an oslo.config file "[database] connection = <url>" under ConfigKey for a pod that
// reads a configuration directory), controlled by the owner like every object of the
// package. A pod reads it into [ConnectionEnv] ([ConnectionEnvVar]), which oslo.config
// prefers over its files, so no configuration file carries the password. Connected.Version
// (the Secret's resourceVersion) is what a pod-template annotation holds so that the pods
// roll when the URL changes. The password and the URL are never in an error, a condition,
// a log line or an Event.
//
// # Generated passwords
//
// With GeneratePassword the password Secret is created through the SDK's generate-once
// path, credential.Ensure: controlled by the owner, labelled [WatchLabel], with a
// password of [PasswordLength] characters from crypto/rand. An existing Secret —
// generated earlier, synced by an ExternalSecret, or written by hand — is only ever
// read, so a password that exists is never replaced. The decision is read from the API
// server on every pass, so a password Secret someone deleted is found missing and
// created again, in this order:
//
//  1. Restored. ProvisionParams.Restore (a credential.Restorer) is asked first: when
//     the backup holds the password, the Secret is created with it, the account keeps
//     its password and no client notices (Event credential.ReasonRestored). While the
//     backup may still deliver it — an ExternalSecret that has not synced yet — nothing
//     is generated ([ReasonPasswordRestorePending]): a new password then would fork
//     the credential from the one the backup holds, and the backup's would be lost.
//  2. Regenerated, loudly. When nothing restores it, a new password is generated. If
//     the User exists, the account was created with the lost password: the creation is
//     logged ("regenerated credential Secret", with the Secret's namespace/name) and
//     recorded as a Warning Event credential.ReasonRegenerated on the owner that names
//     the Secret and the User; mariadb-operator then sets the account's password to
//     the new one ([WatchLabel]), and the database's clients need the new Secret.
//  3. On a first install (no User yet) the creation is logged ("generated credential
//     Secret") and recorded as a Normal Event credential.ReasonGenerated.
//
// A new password, rather than a flow that refuses to go on until someone restores the
// Secret, is the choice for the case where no backup holds the old one: the old
// password survives nowhere (MariaDB keeps only its hash), a refusal would leave the
// database step failed until a person acts, and the new password also ends whatever
// access the old one gave. What must not happen is that it goes unnoticed, or that it
// replaces a password a backup still holds; steps 1 and 2 rule both out. The Events are
// recorded when ProvisionParams.Recorder is set (the manager's
// mgr.GetEventRecorder(name)); set it. The log line is written either way, through the
// pass's logger (log.FromContext).
//
// This package does not depend on the secrets package; a reconciler composes the two.
// For a password Secret that a PushSecret backs up to the secret store and an
// ExternalSecret syncs back into restoreKey, Restore is
//
//	restore := credential.RestorerFunc(func(ctx context.Context, c client.Client, _ client.ObjectKey, dataKey string) (credential.Backup, error) {
//		check, err := secrets.CheckRestore(ctx, c, restoreKey)
//		switch {
//		case err != nil:
//			return credential.Backup{}, err
//		case check.Secret != nil && len(check.Secret.Data[dataKey]) > 0:
//			return credential.Backup{Value: check.Secret.Data[dataKey], From: "Secret " + restoreKey.String()}, nil
//		case check.Pending != nil:
//			return credential.Backup{Pending: "ExternalSecret " + check.Pending.String() + " " + check.Why}, nil
//		}
//		return credential.Backup{}, nil // the backend holds nothing: generate
//	})
//
// The password never appears in a condition, an error, a log line or an Event.
//
// In the SDK's conformance suite (package conformance), declare the password Secret
// write-once (conformance.Options.WriteOnce): the flow never writes it again, so a label
// another client changed on it stays changed, and the Drift check holds it to what
// write-once means — a deleted password Secret comes back restored, or with a new
// password that the log line and the Event report.
//
// # Requests, caches and writes
//
// The flows read through the client they are given: the MariaDB server, the Database,
// User and Grant (the control check of apply.EnsureObject), the password Secret, the
// connection Secret and the sync Jobs. Pass an apply.Applier over the manager's cached
// client (apply.CacheOptions) and a converged pass — everything Ready, nothing to change
// — sends no request at all: the reads are served by informers and the Applier skips the
// converged applies. The password Secret is in that cache when it carries
// apply.ManagedByLabel (one the flow generated does); one written by someone else
// without it costs one GET per ProvisionFlow pass through the Applier's APIReader, and
// so does every Secret read of a manager that reads Secrets past its cache
// (reconcile.UncachedObjects without an Applier). The writes carry the operator's field
// manager (ApplierOptions.FieldManager), and every one is reported through apply.Record:
// the applies like every apply.EnsureObject, the password Secret as apply.ActionCreated,
// the sync Jobs as [job.RunJob] reports them. When the create of the password Secret
// meets AlreadyExists (a second manager created it, or the cache had not seen it yet),
// the Secret is read again past the cache, as unstructured, which a manager's client
// sends to the API server, and nothing is reported. A pass that finds the password
// Secret missing also reads the User (it tells a regeneration from a first install),
// and ProvisionParams.Restore makes its own reads; a converged pass does neither.
//
// # Testing
//
// envtest runs no mariadb-operator: the testenv simulators (MarkMariaDBReady,
// MarkDatabaseReady, MarkUserReady, MarkGrantReady and their NotReady twins) write the
// Ready conditions it would.
//
// # Footprint
//
// Per helper: what it reads and writes, which reads start an informer when the client is
// a manager's cached client (a typed Get or List through mgr.GetClient() does; a read as
// unstructured, or through an APIReader, does not), and the RBAC verbs it needs, as
// the +kubebuilder:rbac markers in rbac.go grant them (rbac/database/role.yaml). list and
// watch come with every get: a cached read lists and watches the kind.
//
//   - [ProvisionFlow], [ReconcileProvision]: gets the MariaDB (informer: MariaDBs); gets
//     and applies the Database, User and Grant (the control checks; informers: Databases,
//     Users, Grants); gets the password Secret (informer: Secrets), creates it when it is
//     missing and asked to generate it (then it gets the User first, and
//     ProvisionParams.Restore makes the reads of its own package) and re-reads it as
//     unstructured after AlreadyExists (no informer); with ProvisionParams.Connection,
//     what EnsureConnectionSecret does (and, on the pass that created the password
//     Secret, one more get of it); with ProvisionParams.Recorder, records an Event per
//     creation. RBAC: k8s.mariadb.com mariadbs get, list, watch; databases, users,
//     grants get, list, watch, create, patch; secrets get, list, watch, create, patch;
//     events (events.k8s.io) create, patch.
//   - [EnsureDatabase], [EnsureDatabaseUser]: get and apply the Database, or the User and
//     the Grant (informers: those kinds). RBAC as above.
//   - [EnsureConnectionSecret]: gets and applies the connection Secret (informer:
//     Secrets). RBAC: secrets get, list, watch, create, patch.
//   - [SyncJobsFlow], [ReconcileSyncJobs]: runs each Job through job.RunJob: gets it
//     (informer: Jobs), creates it, deletes a finished run whose key changed. RBAC: batch
//     jobs get, list, watch, create, delete.
//   - [ConnectionURL], [ConnectionEnvVar]: no API call.
//
// A converged pass costs what "Requests, caches and writes" says: no request through an
// apply.Applier over a manager's cached client for the Secrets that carry
// apply.ManagedByLabel.
package database
