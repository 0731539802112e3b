package keystone

import (
	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/httproute"
	"github.com/c5c3/reconciler-sdk/secrets"
)

// The condition types of a Keystone, one per step, in pipeline order. Ready aggregates
// them (reconcile.ConditionReady, reason reconcile.ReasonAllReady when all are True).
const (
	ConditionSecretsReady     = "SecretsReady"
	ConditionDatabaseTLSReady = "DatabaseTLSReady"
	// ConditionIdentityBackendsReady is the IdentityBackends row's (package
	// identitybackend, whose reasons it carries).
	ConditionIdentityBackendsReady = identitybackend.ConditionIdentityBackendsReady
	ConditionConfigReady           = "ConfigReady"
	ConditionDatabaseReady         = database.ConditionType
	ConditionPolicyValid           = "PolicyValid"
	ConditionDeploymentReady       = "DeploymentReady"
	ConditionHTTPRouteReady        = httproute.ConditionType
	ConditionKeystoneAPIReady      = "KeystoneAPIReady"
	ConditionHPAReady              = deployment.ConditionHPAReady
	ConditionBootstrapReady        = "BootstrapReady"
	ConditionTrustFlushReady       = "TrustFlushReady"
)

// The reasons this package writes itself. The others are those of the packages that
// write them: DatabaseReady's of package database, IdentityBackendsReady's of package
// identitybackend, HTTPRouteReady's, KeystoneAPIReady's and HPAReady's of packages
// httproute, health and deployment, SecretStoreNotReady, ClusterSecretStoreUnsupported
// and RestorePending (ConfigReady: the database password's restore is pending) of
// package secrets, and TargetClusterUnavailable of package multicluster.
const (
	// ReasonSecretsAvailable (SecretsReady True): the store is ready and the admin
	// password Secret holds a password (secrets.ReasonSecretsAvailable).
	ReasonSecretsAvailable = secrets.ReasonSecretsAvailable
	// ReasonWaitingForAdminPassword (SecretsReady False): the ExternalSecret has not
	// synced the admin password Secret yet, or the Secret lacks the password.
	ReasonWaitingForAdminPassword = "WaitingForAdminPassword"
	// ReasonSecretsError (SecretsReady False): an API call of the Secrets row failed;
	// the error is retried with back-off (secrets.ReasonSecretsError).
	ReasonSecretsError = secrets.ReasonSecretsError

	// ReasonCertificateReady (DatabaseTLSReady True): cert-manager issued the database
	// client certificate.
	ReasonCertificateReady = "CertificateReady"
	// ReasonWaitingForCertificate (DatabaseTLSReady False): the client certificate is
	// not issued yet.
	ReasonWaitingForCertificate = "WaitingForCertificate"
	// ReasonTLSNotRequired (DatabaseTLSReady True): the database connection does not
	// use TLS.
	ReasonTLSNotRequired = "TLSNotRequired"

	// ReasonConfigRendered (ConfigReady True): keystone.conf (and policy.yaml) are
	// rendered into the ConfigMap named in status.configMap and the connection Secret
	// holds the database URL.
	ReasonConfigRendered = "ConfigRendered"
	// ReasonConfigError (ConfigReady False): the settings cannot be rendered, a
	// ConfigMap or Secret cannot be written, the database password Secret names no
	// usable account (ErrInconsistentPasswordSecret), or the prune of older ConfigMaps
	// failed.
	ReasonConfigError = "ConfigError"
	// ReasonPolicyNotFound (ConfigReady False): the policy override ConfigMap, or its
	// key, does not exist.
	ReasonPolicyNotFound = "PolicyNotFound"

	// ReasonPolicyValidated (PolicyValid True): the policy overrides passed the Go check
	// and the validation Job.
	ReasonPolicyValidated = "PolicyValidated"
	// ReasonPolicyNotRequired (PolicyValid True): there are no policy overrides.
	ReasonPolicyNotRequired = "PolicyNotRequired"
	// ReasonPolicyValidationInProgress (PolicyValid False): the validation Job runs.
	ReasonPolicyValidationInProgress = "PolicyValidationInProgress"
	// ReasonPolicyInvalid (PolicyValid False): a rule is invalid (the Go check names it)
	// or the validation Job failed; nothing requeues until the overrides change.
	ReasonPolicyInvalid = "PolicyInvalid"

	// ReasonDeploymentReady (DeploymentReady True): the Deployment is rolled out and
	// available.
	ReasonDeploymentReady = "DeploymentReady"
	// ReasonWaitingForDeployment (DeploymentReady False): the Deployment is rolling out.
	ReasonWaitingForDeployment = "WaitingForDeployment"

	// ReasonBootstrapComplete (BootstrapReady True): keystone-manage bootstrap completed
	// for the current admin password.
	ReasonBootstrapComplete = "BootstrapComplete"
	// ReasonBootstrapInProgress (BootstrapReady False): the bootstrap Job runs.
	ReasonBootstrapInProgress = "BootstrapInProgress"
	// ReasonBootstrapFailed (BootstrapReady False): the bootstrap Job failed; it runs
	// again when the admin password changes or the Job is deleted.
	ReasonBootstrapFailed = "BootstrapFailed"

	// ReasonTrustFlushScheduled (TrustFlushReady True): the trust_flush CronJob is
	// applied (suspended or not).
	ReasonTrustFlushScheduled = "TrustFlushScheduled"
)
