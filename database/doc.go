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
// generated earlier — is only ever read, never written or adopted. A password Secret
// that is being deleted is waited for ([ReasonPasswordSecretNotReady]): its password is
// going away, so the User is not applied with it and nothing is created over it. A
// sync Job of the desired name that the owner does not control is refused by
// [job.RunJob] and never deleted or re-run.
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
//		Database: db, User: user, Grant: grant, GeneratePassword: true,
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
// [ReasonUserNotReady], [ReasonGrantNotReady]) and a requeue after [PollInterval]; the
// True reason is [ReasonDatabaseProvisioned].
//
// A generated password is created once, with crypto/rand, in a Secret controlled by the
// owner and labelled [WatchLabel]; an existing Secret — generated earlier, synced by an
// ExternalSecret, or written by hand — is only ever read, so the password is never
// regenerated. The password never appears in a condition, an error or a log line.
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
// sends to the API server.
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
//     gets the password Secret (informer: Secrets), creates it once when asked to generate
//     it and re-reads it as unstructured after AlreadyExists (no informer). RBAC:
//     k8s.mariadb.com mariadbs get, list, watch; databases, users, grants get, list,
//     watch, create, patch; secrets get, list, watch, create.
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
