package controller

import (
	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/httproute"
	"github.com/c5c3/reconciler-sdk/netpol"
	"github.com/c5c3/reconciler-sdk/secrets"
)

// The condition types of a Horizon, one per step, in pipeline order. Ready aggregates
// them (reconcile.ConditionReady, reason reconcile.ReasonAllReady when all are True).
const (
	ConditionSecretsReady       = "SecretsReady"
	ConditionWebSSOReady        = "WebSSOReady"
	ConditionConfigReady        = "ConfigReady"
	ConditionDeploymentReady    = "DeploymentReady"
	ConditionHTTPRouteReady     = httproute.ConditionType
	ConditionHorizonAPIReady    = "HorizonAPIReady"
	ConditionHPAReady           = deployment.ConditionHPAReady
	ConditionVPAReady           = deployment.ConditionVPAReady
	ConditionNetworkPolicyReady = netpol.ConditionType
)

// The reasons this package writes (ReasonSecretsAvailable and ReasonSecretsError are
// those secrets.Sync sets by default); the HTTPRoute, HorizonAPIReady, HPA, VPA and
// NetworkPolicy reasons are those of packages httproute, health, deployment and netpol,
// SecretStoreNotReady and ClusterSecretStoreUnsupported those of package secrets, and
// TargetClusterUnavailable that of package multicluster.
const (
	// ReasonSecretsAvailable (SecretsReady True): the store is ready and the SECRET_KEY
	// Secret holds a key.
	ReasonSecretsAvailable = secrets.ReasonSecretsAvailable
	// ReasonWaitingForSecretKey (SecretsReady False): the ExternalSecret has not synced
	// the SECRET_KEY Secret yet, or the Secret lacks the key.
	ReasonWaitingForSecretKey = "WaitingForSecretKey"
	// ReasonSecretsError (SecretsReady False): the ExternalSecret cannot be written, or
	// the store, it or the SECRET_KEY Secret cannot be read.
	ReasonSecretsError = secrets.ReasonSecretsError
	// ReasonIdentityBackendsNotRequired (WebSSOReady True): websso is not enabled or
	// spec.websso.identityBackends names no backend; nothing is read.
	ReasonIdentityBackendsNotRequired = "IdentityBackendsNotRequired"
	// ReasonIdentityProvidersOffered (WebSSOReady True): every identity provider the
	// named backends declare is registered in Keystone and offered as a login choice.
	ReasonIdentityProvidersOffered = "IdentityProvidersOffered"
	// ReasonWaitingForIdentityBackend (WebSSOReady False): a named backend does not
	// exist, declares no identity provider, or has not registered all of them yet; the
	// message names each. The settings render with the choices that are registered.
	ReasonWaitingForIdentityBackend = "WaitingForIdentityBackend"
	// ReasonWebSSOChoiceConflict (WebSSOReady False): the choice id of a provider
	// (<provider id>_<protocol>) is already a hand-written choice's, which wins, or an
	// earlier backend's; the message names the provider, the backend and the field.
	ReasonWebSSOChoiceConflict = "WebSSOChoiceConflict"
	// ReasonIdentityBackendsNotInstalled (WebSSOReady False): the management cluster
	// does not serve KeystoneIdentityBackends; the settings render with the hand-written
	// choices only.
	ReasonIdentityBackendsNotInstalled = "IdentityBackendsNotInstalled"
	// ReasonIdentityBackendInvalid (WebSSOReady False): a field the row reads of a named
	// backend (spec.federation, its identityProviders' id, description and protocol,
	// status.identityProviders' id and protocol) has another JSON type than the
	// Keystone API declares; the message names the backend, its
	// spec.websso.identityBackends field, the backend's field and both types. That
	// backend adds no choice, the others do; nothing is retried until the backend
	// changes.
	ReasonIdentityBackendInvalid = "IdentityBackendInvalid"
	// ReasonIdentityBackendError (WebSSOReady False): a named backend cannot be read;
	// the error is returned and the pass retried.
	ReasonIdentityBackendError = "IdentityBackendError"
	// ReasonConfigRendered (ConfigReady True): local_settings.py is rendered into the
	// ConfigMap named in status.configMap.
	ReasonConfigRendered = "ConfigRendered"
	// ReasonConfigError (ConfigReady False): the settings cannot be rendered, the
	// ConfigMap cannot be written, or the prune of older ConfigMaps failed.
	ReasonConfigError = "ConfigError"
	// ReasonDeploymentReady (DeploymentReady True): the Deployment is rolled out and
	// available.
	ReasonDeploymentReady = "DeploymentReady"
	// ReasonWaitingForDeployment (DeploymentReady False): the Deployment is rolling out.
	ReasonWaitingForDeployment = "WaitingForDeployment"
	// ReasonDeploymentError (DeploymentReady False): the Service, the
	// PodDisruptionBudget or the Deployment cannot be written.
	ReasonDeploymentError = "DeploymentError"
)
