package controller

import (
	"context"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// The names of a Keystone's children, each derived from the Keystone's name.

// AdminPasswordSecretName is the Secret the admin password ExternalSecret syncs into.
func AdminPasswordSecretName(k *v1alpha1.Keystone) string { return k.Name + "-admin-password" }

// DatabasePasswordSecretName is the Secret holding the database account's password,
// generated once.
func DatabasePasswordSecretName(k *v1alpha1.Keystone) string { return k.Name + "-db-password" }

// ConnectionSecretName is the Secret holding the database connection URL, which the
// pods and Jobs read into OS_DATABASE__CONNECTION.
func ConnectionSecretName(k *v1alpha1.Keystone) string { return k.Name + "-db-connection" }

// FernetKeysSecretName is the Secret holding the fernet key repository.
func FernetKeysSecretName(k *v1alpha1.Keystone) string { return k.Name + "-fernet-keys" }

// CredentialKeysSecretName is the Secret holding the credential key repository.
func CredentialKeysSecretName(k *v1alpha1.Keystone) string { return k.Name + "-credential-keys" }

// ConfigBaseName is the base name of the content-addressed keystone.conf ConfigMaps.
func ConfigBaseName(k *v1alpha1.Keystone) string { return k.Name + "-config" }

// DomainsBaseName is the base name of the content-addressed Secrets holding the
// keystone.<domain>.conf files of the identity backends ({keystone}-domains-{hash}).
func DomainsBaseName(k *v1alpha1.Keystone) string { return k.Name + "-domains" }

// passState carries what one step of a pass hands to a later one.
type passState struct {
	// domainsSecret is the Secret the IdentityBackends step projected the backends
	// into, "" when no backend passed its gate; domainFiles are its data keys. The
	// Deployment mounts each file with subPath.
	domainsSecret string
	domainFiles   []string
}

// withPassState returns ctx carrying s for the steps of one pass (reconcile.WithState).
func withPassState(ctx context.Context, s *passState) context.Context { return reconcile.WithState(ctx, s) }

// stateOf returns the pass state of ctx (reconcile.StateFrom); a step run outside a pass
// gets an empty one.
func stateOf(ctx context.Context) *passState { return reconcile.StateFrom[passState](ctx) }
