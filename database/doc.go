// Package database provisions MariaDB databases for operators built with the SDK,
// through mariadb-operator's custom resources (k8s.mariadb.com/v1alpha1 Database, User
// and Grant, typed from github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1),
// and runs the schema-sync Jobs that follow.
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
// of [ReconcileProvision]. mariadb-operator v25 leaves observedGeneration unset (0) on
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
// An existing Database, User or Grant of the desired name that has no controller (made
// by kubectl or Helm) or another one is refused by [apply.EnsureObject] with an error
// wrapping apply.ErrNotControlled that names its controller, and one that is being
// deleted with apply.ErrBeingDeleted; the object is left as it is and the flows write
// nothing after it. The password Secret is the one exception by design: an existing
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
// [ReconcileProvision] and [ReconcileSyncJobs] are pipeline steps in data form: each
// returns the [ConditionType] condition to set (the caller stamps observedGeneration),
// a ctrl.Result and an error, and never a non-zero result together with an error. A
// reconciler's database step runs them in turn:
//
//	cond, res, err := database.ReconcileProvision(ctx, c, scheme, keystone, database.ProvisionParams{
//		Database: db, User: user, Grant: grant,
//		GeneratePassword: true, Restore: restore, Recorder: r.Recorder, // see "Generated passwords"
//	})
//	if cond.Type != "" { // the zero Condition comes with an API error: keep the old one
//		reconcile.SetCondition(keystone, cond.Type, cond.Status, cond.Reason, cond.Message)
//	}
//	if err != nil || !res.IsZero() {
//		return res, err
//	}
//	cond, res, err = database.ReconcileSyncJobs(ctx, c, scheme, keystone,
//		database.SyncJob{Job: dbSyncJob(keystone)})
//	...
//
// ReconcileProvision gates on the MariaDB server being Ready, then applies the Database
// and waits for it, makes sure the password Secret the User references holds a
// password (generating it once when asked), and applies the User and the Grant. Every
// not-ready state is a False condition with its own reason ([ReasonMariaDBNotFound],
// [ReasonMariaDBNotReady], [ReasonDatabaseNotReady], [ReasonPasswordSecretNotReady],
// [ReasonPasswordRestorePending], [ReasonUserNotReady], [ReasonGrantNotReady]) and a
// requeue after [PollInterval]; the True reason is [ReasonDatabaseProvisioned].
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
// ReconcileSyncJobs runs one or more Jobs in order through [job.RunJob] (or
// [job.RunJobWithKey] when a [SyncJob] carries a re-run key): [ReasonDBSyncInProgress]
// with a requeue while a Job runs, [ReasonDatabaseSynced] once all have completed, and
// [ReasonDBSyncFailed] with a terminal error wrapping [job.ErrJobFailed] when one failed
// permanently — no requeue until its spec or re-run key changes.
//
// # Requests, caches and writes
//
// The flows read through the client they are given: the MariaDB server, the Database,
// User and Grant (the control check of apply.EnsureObject), the password Secret and the
// sync Jobs. Pass an apply.Applier over the manager's cached client and a converged
// pass — everything Ready, nothing to change — sends no request at all: the reads are
// served by informers and the Applier skips the converged applies. A manager that reads
// Secrets past its cache, as reconcile.UncachedObjects recommends, pays one GET of the
// password Secret per ReconcileProvision pass. The writes carry the operator's field
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
// envtest runs no mariadb-operator: the testenv simulators (testenv.MarkMariaDBReady,
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
//   - [ReconcileProvision]: gets the MariaDB (informer: MariaDBs); gets and applies the
//     Database, User and Grant (the control checks; informers: Databases, Users, Grants);
//     gets the password Secret (informer: Secrets), creates it when it is missing and
//     asked to generate it (then it gets the User first, and ProvisionParams.Restore
//     makes the reads of its own package) and re-reads it as unstructured after
//     AlreadyExists (no informer); with ProvisionParams.Recorder, records an Event per
//     creation. RBAC: k8s.mariadb.com mariadbs get, list, watch; databases, users,
//     grants get, list, watch, create, patch; secrets get, list, watch, create; events
//     (events.k8s.io) create, patch.
//   - [EnsureDatabase], [EnsureDatabaseUser]: get and apply the Database, or the User and
//     the Grant (informers: those kinds). RBAC as above.
//   - [ReconcileSyncJobs]: runs each Job through job.RunJob: gets it (informer: Jobs),
//     creates it, deletes a finished run whose key changed. RBAC: batch jobs get, list,
//     watch, create, delete.
//
// A converged pass costs what "Requests, caches and writes" says: no request through an
// apply.Applier over a manager's cached client, one GET of the password Secret per
// ReconcileProvision pass when Secrets are read past the cache.
package database
