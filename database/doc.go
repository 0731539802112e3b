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
// the Ready condition True — on the Database, or on both the User and the Grant —
// (false, nil) before, (false, err) on failure. The field manager owns only what the
// builder sets, so server defaults (a Database's characterSet and collate, a User's
// maxUserConnections) are kept and a converged object is not rewritten: its
// resourceVersion does not move. EnsureDatabaseUser applies the User first and does
// not attempt the Grant when the User fails.
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
// # Testing
//
// envtest runs no mariadb-operator: the testenv simulators (testenv.MarkMariaDBReady,
// MarkDatabaseReady, MarkUserReady, MarkGrantReady and their NotReady twins) write the
// Ready conditions it would.
package database
