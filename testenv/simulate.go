package testenv

import (
	"context"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// The status simulators of package [simulate], under their old names. They keep
// compiling for one release.

// Names and messages the simulators write.
//
// Deprecated: use the same names in package simulate.
const (
	ESOManagedLabel                    = simulate.ESOManagedLabel
	SimulatedJobManager                = simulate.SimulatedJobManager
	SimulatedGatewayController         = simulate.SimulatedGatewayController
	PushSecretSyncedMessage            = simulate.PushSecretSyncedMessage
	PushSecretSyncedIfNotExistsMessage = simulate.PushSecretSyncedIfNotExistsMessage
	SecretBackendSyncedMessage         = simulate.SecretBackendSyncedMessage
	SecretBackendDeletedMessage        = simulate.SecretBackendDeletedMessage
	SecretBackendNotOwnedMessage       = simulate.SecretBackendNotOwnedMessage
)

// ErrSecretBackendUnsupported is [simulate.ErrSecretBackendUnsupported] (the same error).
//
// Deprecated: use simulate.ErrSecretBackendUnsupported.
var ErrSecretBackendUnsupported = simulate.ErrSecretBackendUnsupported

// SecretBackend is [simulate.SecretBackend].
//
// Deprecated: use simulate.SecretBackend.
type SecretBackend = simulate.SecretBackend

// NewSecretBackend is [simulate.NewSecretBackend].
//
// Deprecated: use simulate.NewSecretBackend.
func NewSecretBackend(c client.Client) *SecretBackend { return simulate.NewSecretBackend(c) }

// MarkCertificateNotReady is [simulate.MarkCertificateNotReady].
//
// Deprecated: use simulate.MarkCertificateNotReady.
func MarkCertificateNotReady(ctx context.Context, c client.Client, key client.ObjectKey, reason string) (*certmanagerv1.Certificate, error) {
	return simulate.MarkCertificateNotReady(ctx, c, key, reason)
}

// MarkCertificateReady is [simulate.MarkCertificateReady].
//
// Deprecated: use simulate.MarkCertificateReady.
func MarkCertificateReady(ctx context.Context, c client.Client, key client.ObjectKey) (*certmanagerv1.Certificate, error) {
	return simulate.MarkCertificateReady(ctx, c, key)
}

// MarkClusterSecretStoreNotReady is [simulate.MarkClusterSecretStoreNotReady].
//
// Deprecated: use simulate.MarkClusterSecretStoreNotReady.
func MarkClusterSecretStoreNotReady(ctx context.Context, c client.Client, name, reason string) (*esov1.ClusterSecretStore, error) {
	return simulate.MarkClusterSecretStoreNotReady(ctx, c, name, reason)
}

// MarkClusterSecretStoreReady is [simulate.MarkClusterSecretStoreReady].
//
// Deprecated: use simulate.MarkClusterSecretStoreReady.
func MarkClusterSecretStoreReady(ctx context.Context, c client.Client, name string) (*esov1.ClusterSecretStore, error) {
	return simulate.MarkClusterSecretStoreReady(ctx, c, name)
}

// MarkDatabaseNotReady is [simulate.MarkDatabaseNotReady].
//
// Deprecated: use simulate.MarkDatabaseNotReady.
func MarkDatabaseNotReady(ctx context.Context, c client.Client, key client.ObjectKey, reason, message string) (*mariadbv1alpha1.Database, error) {
	return simulate.MarkDatabaseNotReady(ctx, c, key, reason, message)
}

// MarkDatabaseReady is [simulate.MarkDatabaseReady].
//
// Deprecated: use simulate.MarkDatabaseReady.
func MarkDatabaseReady(ctx context.Context, c client.Client, key client.ObjectKey) (*mariadbv1alpha1.Database, error) {
	return simulate.MarkDatabaseReady(ctx, c, key)
}

// MarkDeploymentAvailable is [simulate.MarkDeploymentAvailable].
//
// Deprecated: use simulate.MarkDeploymentAvailable.
func MarkDeploymentAvailable(ctx context.Context, c client.Client, key client.ObjectKey) (*appsv1.Deployment, error) {
	return simulate.MarkDeploymentAvailable(ctx, c, key)
}

// MarkExternalSecretEmpty is [simulate.MarkExternalSecretEmpty].
//
// Deprecated: use simulate.MarkExternalSecretEmpty.
func MarkExternalSecretEmpty(ctx context.Context, c client.Client, key client.ObjectKey) (*esov1.ExternalSecret, error) {
	return simulate.MarkExternalSecretEmpty(ctx, c, key)
}

// MarkExternalSecretNotSynced is [simulate.MarkExternalSecretNotSynced].
//
// Deprecated: use simulate.MarkExternalSecretNotSynced.
func MarkExternalSecretNotSynced(ctx context.Context, c client.Client, key client.ObjectKey, reason string) (*esov1.ExternalSecret, error) {
	return simulate.MarkExternalSecretNotSynced(ctx, c, key, reason)
}

// MarkExternalSecretSynced is [simulate.MarkExternalSecretSynced].
//
// Deprecated: use simulate.MarkExternalSecretSynced.
func MarkExternalSecretSynced(ctx context.Context, c client.Client, key client.ObjectKey, data map[string][]byte) (*esov1.ExternalSecret, error) {
	return simulate.MarkExternalSecretSynced(ctx, c, key, data)
}

// MarkGrantNotReady is [simulate.MarkGrantNotReady].
//
// Deprecated: use simulate.MarkGrantNotReady.
func MarkGrantNotReady(ctx context.Context, c client.Client, key client.ObjectKey, reason, message string) (*mariadbv1alpha1.Grant, error) {
	return simulate.MarkGrantNotReady(ctx, c, key, reason, message)
}

// MarkGrantReady is [simulate.MarkGrantReady].
//
// Deprecated: use simulate.MarkGrantReady.
func MarkGrantReady(ctx context.Context, c client.Client, key client.ObjectKey) (*mariadbv1alpha1.Grant, error) {
	return simulate.MarkGrantReady(ctx, c, key)
}

// MarkJobComplete is [simulate.MarkJobComplete].
//
// Deprecated: use simulate.MarkJobComplete.
func MarkJobComplete(ctx context.Context, c client.Client, key client.ObjectKey) (*batchv1.Job, error) {
	return simulate.MarkJobComplete(ctx, c, key)
}

// MarkJobFailed is [simulate.MarkJobFailed].
//
// Deprecated: use simulate.MarkJobFailed.
func MarkJobFailed(ctx context.Context, c client.Client, key client.ObjectKey) (*batchv1.Job, error) {
	return simulate.MarkJobFailed(ctx, c, key)
}

// MarkMariaDBNotReady is [simulate.MarkMariaDBNotReady].
//
// Deprecated: use simulate.MarkMariaDBNotReady.
func MarkMariaDBNotReady(ctx context.Context, c client.Client, key client.ObjectKey, reason, message string) (*mariadbv1alpha1.MariaDB, error) {
	return simulate.MarkMariaDBNotReady(ctx, c, key, reason, message)
}

// MarkMariaDBReady is [simulate.MarkMariaDBReady].
//
// Deprecated: use simulate.MarkMariaDBReady.
func MarkMariaDBReady(ctx context.Context, c client.Client, key client.ObjectKey) (*mariadbv1alpha1.MariaDB, error) {
	return simulate.MarkMariaDBReady(ctx, c, key)
}

// MarkPushSecretFailed is [simulate.MarkPushSecretFailed].
//
// Deprecated: use simulate.MarkPushSecretFailed.
func MarkPushSecretFailed(ctx context.Context, c client.Client, key client.ObjectKey, message string) (*esov1alpha1.PushSecret, error) {
	return simulate.MarkPushSecretFailed(ctx, c, key, message)
}

// MarkPushSecretSynced is [simulate.MarkPushSecretSynced].
//
// Deprecated: use simulate.MarkPushSecretSynced.
func MarkPushSecretSynced(ctx context.Context, c client.Client, key client.ObjectKey) (*esov1alpha1.PushSecret, error) {
	return simulate.MarkPushSecretSynced(ctx, c, key)
}

// MarkSecretStoreNotReady is [simulate.MarkSecretStoreNotReady].
//
// Deprecated: use simulate.MarkSecretStoreNotReady.
func MarkSecretStoreNotReady(ctx context.Context, c client.Client, key client.ObjectKey, reason string) (*esov1.SecretStore, error) {
	return simulate.MarkSecretStoreNotReady(ctx, c, key, reason)
}

// MarkSecretStoreReady is [simulate.MarkSecretStoreReady].
//
// Deprecated: use simulate.MarkSecretStoreReady.
func MarkSecretStoreReady(ctx context.Context, c client.Client, key client.ObjectKey) (*esov1.SecretStore, error) {
	return simulate.MarkSecretStoreReady(ctx, c, key)
}

// MarkUserNotReady is [simulate.MarkUserNotReady].
//
// Deprecated: use simulate.MarkUserNotReady.
func MarkUserNotReady(ctx context.Context, c client.Client, key client.ObjectKey, reason, message string) (*mariadbv1alpha1.User, error) {
	return simulate.MarkUserNotReady(ctx, c, key, reason, message)
}

// MarkUserReady is [simulate.MarkUserReady].
//
// Deprecated: use simulate.MarkUserReady.
func MarkUserReady(ctx context.Context, c client.Client, key client.ObjectKey) (*mariadbv1alpha1.User, error) {
	return simulate.MarkUserReady(ctx, c, key)
}

// SetHTTPRouteAccepted is [simulate.SetHTTPRouteAccepted].
//
// Deprecated: use simulate.SetHTTPRouteAccepted.
func SetHTTPRouteAccepted(ctx context.Context, c client.Client, key client.ObjectKey, status metav1.ConditionStatus, reason, message string, observedGeneration int64) (*gatewayv1.HTTPRoute, error) {
	return simulate.SetHTTPRouteAccepted(ctx, c, key, status, reason, message, observedGeneration)
}

// SimulatedJob is [simulate.SimulatedJob].
//
// Deprecated: use simulate.SimulatedJob.
func SimulatedJob(j *batchv1.Job) *batchv1.Job {
	return simulate.SimulatedJob(j)
}
