// Package keystone is the Keystone operator's reconciler: one pass resolves the
// Keystone's target cluster, then runs a table of steps built from the SDK's packages,
// each setting one condition. Ready (reason AllReady) is True exactly when every
// sub-condition is True; conditions and status are written on every exit path, and a
// converged pass writes nothing.
//
// # Pipeline
//
// The steps run in this order. The steps before the Exposure group end the pass at the
// first requeue or error; the group runs all of its members and requeues after the
// shortest interval any of them asked for. Every step answers in the reconcile.Outcome
// shape, handed over with reconcile.Settle, and declares the kinds it writes
// (reconcile.Step.Owns): the watches, [Reconciler.Children] and the target-cluster
// sweep derive from the table.
//
//	Step              What it does                                                  Condition
//	Secrets           gate on the secret store of spec.secretStoreRef (default      SecretsReady
//	                  ClusterSecretStore openbao-cluster-store), sync
//	                  spec.bootstrap.adminPassword through the ExternalSecret
//	                  <name>-admin-password into the Secret of that name
//	                  (secrets.Sync)
//	DatabaseTLS       with spec.database.tls the cert-manager Certificate           DatabaseTLSReady
//	                  <name>-db-client (client certificate of the database
//	                  account, Secret <name>-db-client-tls); without it none
//	IdentityBackends  the KeystoneIdentityBackends whose DomainReady gate passed,   IdentityBackendsReady
//	                  one keystone.<domain>.conf each, in the immutable Secret
//	                  <name>-domains-<hash> (the bind passwords are in it), and
//	                  their identity providers in the immutable Secret
//	                  <name>-federation-<hash> (none without federation): the
//	                  row of package identitybackend
//	Config            the database password, generated once into                    ConfigReady
//	                  <name>-db-password or, when that Secret is missing, restored
//	                  (every data key) from the backup through the ExternalSecret
//	                  <name>-db-password-restore; nothing is generated while that
//	                  ExternalSecret has not told whether the backend holds one;
//	                  the URL of the active account (see PasswordRotation) in the
//	                  Secret <name>-db-connection (database.EnsureConnectionSecret);
//	                  the policy overrides of spec.policy.configMapRef; keystone.conf
//	                  and policy.yaml in the immutable ConfigMap <name>-config-<hash>
//	                  (status.configMap)
//	RotationAccess    no condition of its own: unless                              FernetKeysReady and
//	                  Options.RotationServiceAccount is set, the ServiceAccount     CredentialKeysReady
//	                  <name>-rotation, a Role of that name with get and update on  on a refusal
//	                  the fernet key, credential key and
//	                  database password Secrets by name (rotation.PolicyRules),
//	                  and its RoleBinding; the rotation CronJobs run as it
//	Keys (group)      FernetKeys and CredentialKeys: each key repository generated  FernetKeysReady,
//	                  once into <name>-fernet-keys / <name>-credential-keys (or     CredentialKeysReady
//	                  restored from its backup), backed up with a PushSecret, and
//	                  rotated by a CronJob running this operator's rotate-keys
//	                  (package rotation) at most once per rotationInterval
//	Database          the mariadb-operator Database, User and Grant (those of the    DatabaseReady
//	                  second account <name>-b too, once it exists), then the Job
//	                  <name>-db-sync (keystone-manage db_sync) once per image
//	                  (status.syncedImage)
//	PolicyValidation  the overrides checked in Go (policy.Validate over BaseRules),  PolicyValid
//	                  then by oslopolicy-validator in the Job <name>-policy-check
//	Deployment        the API Deployment (port 5000, probes GET /v3, keystone.conf   DeploymentReady
//	                  and policy.yaml with subPath, the fernet and credential key
//	                  Secrets as whole volumes, the domain files with subPath under
//	                  /etc/keystone/domains, the federation Secret whole under
//	                  /etc/keystone/federation with its keystone.conf fragment
//	                  under /etc/keystone/keystone.conf.d and each provider's web
//	                  server fragment under /etc/apache2/conf-enabled (subPath; a
//	                  new Secret name, and only that, rolls the pods),
//	                  OS_DATABASE__CONNECTION from the
//	                  connection Secret, revisionHistoryLimit
//	                  deployment.DefaultRevisionHistoryLimit), the Service and the
//	                  PDB; status.endpoint
//	Prune             no condition of its own: delete the ConfigMaps older than      ConfigReady on failure
//	                  three, never one a workload still mounts
//	HTTPRoute         the HTTPRoute of spec.gateway; the Gateway's Accepted verdict  HTTPRouteReady
//	HealthCheck       GET <endpoint>/v3 through a 30 s TTL probe cache; the answer   KeystoneAPIReady
//	                  must be a version document of v3.x
//	HPA               the HorizontalPodAutoscaler of spec.autoscaling, or none       HPAReady
//	Bootstrap         the Job <name>-bootstrap (keystone-manage bootstrap, the       BootstrapReady
//	                  password in OS_BOOTSTRAP_PASSWORD from the Secret), run again
//	                  only when the admin password or a bootstrap argument changes
//	TrustFlush        the CronJob <name>-trust-flush (keystone-manage trust_flush,   TrustFlushReady
//	                  spec.trustFlush.schedule, hourly by default; suspend honoured)
//	PasswordRotation  the CronJob <name>-password-rotate (rotate-password, package   PasswordRotationReady
//	                  rotation) stages a new database password; the PushSecret
//	                  <name>-db-password backs the password Secret up. Two database accounts
//	                  alternate: <user> (User and Grant <name>, data key
//	                  password) and <user>-b (User and Grant <name>-b, data key
//	                  password-b, made at the first rotation); data key account
//	                  names the one the pods use. A staged password is taken
//	                  only once the PushSecret reports a push of the Secret that
//	                  holds it (secrets.ConfirmPush stamps the PushSecret with
//	                  the Secret's resourceVersion and reads ESO's status); it
//	                  goes to the idle account (its User reads data
//	                  key current); the Job <name>-db-password-check
//	                  (keystone-manage db_version as that account, the new
//	                  password from data key current) shows the database accepts
//	                  it, and only then do the pods switch to that account (the
//	                  User's Ready is no evidence: mariadb-operator writes it
//	                  without observedGeneration and leaves a True one as it is);
//	                  a failed check is deleted and runs again. When the rollout
//	                  has finished the previously active account is left idle
//	                  with its old password, which the next rotation replaces.
//	                  The pods not yet replaced keep a valid credential
//	                  throughout
//
// Each step is instrumented under the metrics prefix keystone_operator
// (keystone_operator_reconcile_duration_seconds, keystone_operator_reconcile_errors_total).
//
// # Conditions
//
//	Type              True reasons                            False reasons
//	SecretsReady      SecretsAvailable                        TargetClusterUnavailable, SecretStoreNotReady,
//	                                                          ClusterSecretStoreUnsupported, WaitingForAdminPassword,
//	                                                          SecretsError
//	DatabaseTLSReady  CertificateReady, TLSNotRequired        WaitingForCertificate
//	IdentityBackendsReady IdentityBackendsProjected,          IdentityBackendConflict, IdentityBackendsError
//	                  NoIdentityBackends
//	ConfigReady       ConfigRendered                          ConfigError, PolicyNotFound, RestorePending
//	FernetKeysReady,  KeysReady                               WaitingForKeyRestore, KeysInvalid, UnsafeRotation,
//	CredentialKeysReady                                       InvalidRotationSettings, KeysNotControlled,
//	                                                          KeysLabelsNotRestored
//	DatabaseReady     DatabaseSynced                          MariaDBNotFound, MariaDBNotReady, DatabaseNotReady,
//	                                                          PasswordSecretNotReady, DatabaseUserNotReady,
//	                                                          DatabaseGrantNotReady, DBSyncInProgress, DBSyncFailed
//	                                                          (DatabaseProvisioned is True only within a pass)
//	PolicyValid       PolicyValidated, PolicyNotRequired      PolicyValidationInProgress, PolicyInvalid
//	DeploymentReady   DeploymentReady                         WaitingForDeployment
//	HTTPRouteReady    HTTPRouteAccepted, HTTPRouteNotRequired HTTPRouteNotAccepted, GatewayAPINotInstalled,
//	                                                          CapabilityProbeFailed
//	KeystoneAPIReady  APIHealthy                              APIUnhealthy, EndpointNotReady, HealthCheckTimeout,
//	                                                          ConnectionFailed, HealthCheckFailed
//	HPAReady          HPAReady, HPANotRequired                — (errors propagate)
//	BootstrapReady    BootstrapComplete                       BootstrapInProgress, BootstrapFailed
//	TrustFlushReady   TrustFlushScheduled                     — (errors propagate)
//	PasswordRotationReady PasswordRotationIdle, PasswordRotated PasswordRotationInProgress, PasswordRotationFailed
//
// ConfigError for input that cannot be rendered, PolicyInvalid, DBSyncFailed and
// BootstrapFailed end the pass with a terminal error: nothing requeues until the input
// changes (the Keystone, the overrides, the image, the admin password). TargetClusterUnavailable is set ahead of every
// step when spec.targetClusterRef names a cluster that is not registered or does not
// answer: the Keystone requeues after 15 seconds and nothing is written on any cluster.
//
// # Secrets
//
// No password reaches a log, an event, a condition, an error, a Job or CronJob argument
// or annotation. The database URL, which holds the database password, lives in the
// Secret <name>-db-connection and reaches every container through the environment
// variable OS_DATABASE__CONNECTION; keystone.conf holds nothing secret. The admin
// password reaches the bootstrap Job through OS_BOOTSTRAP_PASSWORD from its Secret.
// The bootstrap's re-run key is an HMAC-SHA256 keyed with a random key generated once
// into <name>-bootstrap-key, and job.RunJobWithKey stores only a further keyed digest
// of it on the Job. The pods carry the connection Secret's resourceVersion as an
// annotation, so a new URL rolls them. A rotated database password (rotate-password
// stages it under "staged" in <name>-db-password) is pushed to the backend
// (PasswordRemoteKey) before anything uses it, then reaches the idle database account
// (its User reads "current"), then, once the password check Job has connected with it,
// the connection Secret, which switches the pods to that account; the previously
// active account keeps its password, so the pods not yet replaced keep connecting, and
// is idle afterwards. The check Job gets the new password through an environment
// variable from data key current, expanded into OS_DATABASE__CONNECTION by the
// kubelet; its spec holds the URL without the password, and its re-run key is the
// password Secret's resourceVersion.
//
// # Identity backends
//
// The KeystoneIdentityBackends have a controller of their own (package
// identitybackend), which creates their domains in Keystone through the Keystone's own
// Service only; this package registers the row that projects them and watches them
// (identitybackend.MapToKeystone).
//
// # Requeues
//
//	10 s   Deployment readiness, HTTPRoute acceptance, health-check retry, database
//	       provisioning and db-sync, policy validation, bootstrap, a missing policy
//	       ConfigMap, a database password rotation in progress
//	15 s   secret store and admin password polling, a pending restore of the
//	       database password, certificate issuance; an
//	       unavailable target cluster; a converged Keystone on a target cluster
//	30 s   TTL of a passing version-document probe
//
// # Deletion
//
// On the management cluster deletion needs no finalizer: every child is namespaced and
// carries a controller owner reference, so the garbage collector reclaims the whole
// set. A Keystone with spec.targetClusterRef gets one finalizer per target cluster
// (multicluster.Cleanup): at deletion its children there are swept.
//
// # Watches
//
// See [Reconciler.SetupWithManager]: the owned kinds; the admin password, database
// password and connection Secrets through a field index; both store kinds (the
// ClusterSecretStore leg absent in namespace-scoped mode); the children on target
// clusters. The policy override ConfigMap is not watched: an edit of it is picked up at
// the next pass (an edit of the Keystone, a change of a child, the periodic resync).
package keystone
