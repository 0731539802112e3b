package controller

import (
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
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

// passState carries what one step of a pass hands to a later one: the pass stores it
// with reconcile.WithState, the steps read it with reconcile.StateFrom.
type passState struct {
	// domainsSecret is the Secret the IdentityBackends step projected the backends
	// into, "" when no backend passed its gate; domainFiles are its data keys. The
	// Deployment mounts each file with subPath.
	domainsSecret string
	domainFiles   []string
}
