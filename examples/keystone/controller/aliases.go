package controller

import (
	"context"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
	"github.com/c5c3/reconciler-sdk/multicluster"
)

// The Keystone reconciler.
type (
	// Options configure NewReconciler.
	//
	// Deprecated: use keystone.Options.
	Options = keystone.Options
	// Reconciler reconciles Keystones.
	//
	// Deprecated: use keystone.Reconciler.
	Reconciler = keystone.Reconciler
	// KeyStepOptions configure the key repository steps.
	//
	// Deprecated: use keystone.KeyStepOptions.
	KeyStepOptions = keystone.KeyStepOptions
	// KeyRepositoryStep is the FernetKeys or the CredentialKeys row.
	//
	// Deprecated: use keystone.KeyRepositoryStep.
	KeyRepositoryStep = keystone.KeyRepositoryStep
	// IdentityBackendOptions configure NewIdentityBackendReconciler.
	//
	// Deprecated: use identitybackend.Options.
	IdentityBackendOptions = identitybackend.Options
	// IdentityBackendReconciler reconciles KeystoneIdentityBackends.
	//
	// Deprecated: use identitybackend.Reconciler.
	IdentityBackendReconciler = identitybackend.Reconciler
)

// NewReconciler builds the Keystone reconciler on resolver.
//
// Deprecated: use keystone.NewReconciler.
func NewReconciler(resolver *multicluster.ClusterResolver, opts Options) (*Reconciler, error) {
	return keystone.NewReconciler(resolver, opts)
}

// DefaultOptions returns the options of a cluster-wide operator.
//
// Deprecated: use keystone.DefaultOptions.
func DefaultOptions() Options { return keystone.DefaultOptions() }

// NewIdentityBackendReconciler builds the KeystoneIdentityBackend reconciler on resolver.
//
// Deprecated: use identitybackend.NewReconciler.
func NewIdentityBackendReconciler(resolver *multicluster.ClusterResolver, opts IdentityBackendOptions) (*IdentityBackendReconciler, error) {
	return identitybackend.NewReconciler(resolver, opts)
}

// DefaultIdentityBackendOptions returns the identity backend controller's defaults.
//
// Deprecated: use identitybackend.DefaultOptions.
func DefaultIdentityBackendOptions() IdentityBackendOptions { return identitybackend.DefaultOptions() }

// NewFernetKeysStep returns the FernetKeys step.
//
// Deprecated: use keystone.NewFernetKeysStep.
func NewFernetKeysStep(opts KeyStepOptions) *KeyRepositoryStep {
	return keystone.NewFernetKeysStep(opts)
}

// NewCredentialKeysStep returns the CredentialKeys step.
//
// Deprecated: use keystone.NewCredentialKeysStep.
func NewCredentialKeysStep(opts KeyStepOptions) *KeyRepositoryStep {
	return keystone.NewCredentialKeysStep(opts)
}

// VersionDocumentValid is the health check's judgement of a 2xx answer.
//
// Deprecated: use keystone.VersionDocumentValid.
func VersionDocumentValid(status int, header http.Header, body []byte) error {
	return keystone.VersionDocumentValid(status, header, body)
}

// Constants of the Keystone operator.
const (
	// Deprecated: use keystone.FieldManager.
	FieldManager = keystone.FieldManager
	// Deprecated: use keystone.VersionPath.
	VersionPath = keystone.VersionPath
	// Deprecated: use keystone.DefaultOperatorImage.
	DefaultOperatorImage = keystone.DefaultOperatorImage
	// Deprecated: use keystone.DefaultMaxActiveKeys.
	DefaultMaxActiveKeys = keystone.DefaultMaxActiveKeys
	// Deprecated: use keystone.DefaultRotationInterval.
	DefaultRotationInterval = keystone.DefaultRotationInterval
	// Deprecated: use names.AdminPasswordDataKey.
	AdminPasswordDataKey = names.AdminPasswordDataKey
)

// The condition types of a Keystone and the reasons its importers read.
const (
	// Deprecated: use keystone.ConditionSecretsReady.
	ConditionSecretsReady = keystone.ConditionSecretsReady
	// Deprecated: use keystone.ConditionDatabaseTLSReady.
	ConditionDatabaseTLSReady = keystone.ConditionDatabaseTLSReady
	// Deprecated: use keystone.ConditionIdentityBackendsReady.
	ConditionIdentityBackendsReady = keystone.ConditionIdentityBackendsReady
	// Deprecated: use keystone.ConditionConfigReady.
	ConditionConfigReady = keystone.ConditionConfigReady
	// Deprecated: use keystone.ConditionFernetKeysReady.
	ConditionFernetKeysReady = keystone.ConditionFernetKeysReady
	// Deprecated: use keystone.ConditionCredentialKeysReady.
	ConditionCredentialKeysReady = keystone.ConditionCredentialKeysReady
	// Deprecated: use keystone.ConditionDatabaseReady.
	ConditionDatabaseReady = keystone.ConditionDatabaseReady
	// Deprecated: use keystone.ConditionPolicyValid.
	ConditionPolicyValid = keystone.ConditionPolicyValid
	// Deprecated: use keystone.ConditionDeploymentReady.
	ConditionDeploymentReady = keystone.ConditionDeploymentReady
	// Deprecated: use keystone.ConditionHTTPRouteReady.
	ConditionHTTPRouteReady = keystone.ConditionHTTPRouteReady
	// Deprecated: use keystone.ConditionKeystoneAPIReady.
	ConditionKeystoneAPIReady = keystone.ConditionKeystoneAPIReady
	// Deprecated: use keystone.ConditionHPAReady.
	ConditionHPAReady = keystone.ConditionHPAReady
	// Deprecated: use keystone.ConditionBootstrapReady.
	ConditionBootstrapReady = keystone.ConditionBootstrapReady
	// Deprecated: use keystone.ConditionTrustFlushReady.
	ConditionTrustFlushReady = keystone.ConditionTrustFlushReady
	// Deprecated: use keystone.ConditionPasswordRotationReady.
	ConditionPasswordRotationReady = keystone.ConditionPasswordRotationReady
	// Deprecated: use keystone.ReasonWaitingForAdminPassword.
	ReasonWaitingForAdminPassword = keystone.ReasonWaitingForAdminPassword
	// Deprecated: use keystone.ReasonWaitingForKeyRestore.
	ReasonWaitingForKeyRestore = keystone.ReasonWaitingForKeyRestore
)

// AdminPasswordSecretName is the Secret the admin password ExternalSecret syncs into.
//
// Deprecated: use names.AdminPasswordSecretName.
func AdminPasswordSecretName(k *v1alpha1.Keystone) string { return names.AdminPasswordSecretName(k) }

// FernetKeysSecretName is the Secret holding the fernet key repository.
//
// Deprecated: use names.FernetKeysSecretName.
func FernetKeysSecretName(k *v1alpha1.Keystone) string { return names.FernetKeysSecretName(k) }

// DBSyncJobName is the Job that runs keystone-manage db_sync.
//
// Deprecated: use keystone.DBSyncJobName.
func DBSyncJobName(k *v1alpha1.Keystone) string { return keystone.DBSyncJobName(k) }

// BootstrapJobName is the Job that runs keystone-manage bootstrap.
//
// Deprecated: use keystone.BootstrapJobName.
func BootstrapJobName(k *v1alpha1.Keystone) string { return keystone.BootstrapJobName(k) }

// PasswordRestoreName is the restore ExternalSecret of the database password.
//
// Deprecated: use keystone.PasswordRestoreName.
func PasswordRestoreName(k *v1alpha1.Keystone) string { return keystone.PasswordRestoreName(k) }

// PasswordRemoteKey is the backend key of the database password's backup.
//
// Deprecated: use keystone.PasswordRemoteKey.
func PasswordRemoteKey(k *v1alpha1.Keystone) string { return keystone.PasswordRemoteKey(k) }

// RotateKeys rotates the key repository in the Secret at key once.
//
// Deprecated: use rotation.RotateKeys.
func RotateKeys(ctx context.Context, c client.Client, key client.ObjectKey, maxActiveKeys int,
	interval time.Duration, now time.Time) (bool, error) {
	return rotation.RotateKeys(ctx, c, key, maxActiveKeys, interval, now)
}

// RotateKeysArgs returns the arguments of the rotation CronJob's container.
//
// Deprecated: use rotation.RotateKeysArgs.
func RotateKeysArgs(key client.ObjectKey, maxActiveKeys int, interval time.Duration) []string {
	return rotation.RotateKeysArgs(key, maxActiveKeys, interval)
}
