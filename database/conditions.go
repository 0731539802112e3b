package database

import "time"

// ConditionType is the condition both flows report: [ProvisionFlow] up to
// [ReasonDatabaseProvisioned], then [SyncJobsFlow] up to [ReasonDatabaseSynced].
// A reconciler's database step runs them one after the other on the same condition, so
// the condition turns True for good only once the schema is synced.
const ConditionType = "DatabaseReady"

// Reasons of [ProvisionFlow]. Each not-ready state has its own False reason and
// requeues after [PollInterval].
const (
	// ReasonMariaDBNotFound (False): the MariaDB server that spec.mariaDbRef names does
	// not exist (yet).
	ReasonMariaDBNotFound = "MariaDBNotFound"
	// ReasonMariaDBNotReady (False): the MariaDB server exists but its Ready condition
	// is not True, or was observed for an older generation than its spec. Nothing is
	// applied until it is.
	ReasonMariaDBNotReady = "MariaDBNotReady"
	// ReasonDatabaseNotReady (False): the Database is applied but mariadb-operator has
	// not reported it Ready.
	ReasonDatabaseNotReady = "DatabaseNotReady"
	// ReasonPasswordSecretNotReady (False): the password Secret the User references is
	// missing (and the flow does not generate it), is being deleted, or lacks a
	// non-empty value under its key.
	ReasonPasswordSecretNotReady = "PasswordSecretNotReady"
	// ReasonPasswordRestorePending (False): the password Secret is missing,
	// ProvisionParams.Restore says its backup may still deliver the password, and no
	// new password is generated meanwhile; the message says what the restore waits
	// for.
	ReasonPasswordRestorePending = "PasswordRestorePending"
	// ReasonUserNotReady (False): the User is applied but not Ready.
	ReasonUserNotReady = "DatabaseUserNotReady"
	// ReasonGrantNotReady (False): the User is Ready, the Grant is applied but not
	// Ready.
	ReasonGrantNotReady = "DatabaseGrantNotReady"
	// ReasonDatabaseProvisioned (True): the server, the Database, the password Secret,
	// the User and the Grant are all ready.
	ReasonDatabaseProvisioned = "DatabaseProvisioned"
)

// Reasons of [SyncJobsFlow].
const (
	// ReasonDBSyncInProgress (False): a sync Job was created or is still running; the
	// flow requeues after [PollInterval].
	ReasonDBSyncInProgress = "DBSyncInProgress"
	// ReasonDBSyncFailed (False): a sync Job failed permanently and its re-run key is
	// unchanged. The flow returns a terminal error: no requeue until the Job's spec
	// (or re-run key) changes.
	ReasonDBSyncFailed = "DBSyncFailed"
	// ReasonDatabaseSynced (True): every sync Job has completed.
	ReasonDatabaseSynced = "DatabaseSynced"
)

// PollInterval is the requeue of both flows while something they wait for is not
// ready: 10 s, the polling interval for children that become ready on their own.
const PollInterval = 10 * time.Second
