package names

import (
	"fmt"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
)

// AdminPasswordSecretName is the Secret the admin password ExternalSecret syncs into.
func AdminPasswordSecretName(k *v1alpha1.Keystone) string { return k.Name + "-admin-password" }

// DatabasePasswordSecretName is the Secret holding the database accounts' passwords,
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

// FederationBaseName is the base name of the content-addressed Secrets holding the
// federation documents of the identity backends' identity providers
// ({keystone}-federation-{hash}).
func FederationBaseName(k *v1alpha1.Keystone) string { return k.Name + "-federation" }

// OpenIDPassphraseSecretName is the Secret holding the session passphrase
// (mod_auth_openidc's OIDCCryptoPassphrase) of each OpenID Connect identity provider
// of the Keystone, one data key per provider id, generated once at random and owned by
// the Keystone.
func OpenIDPassphraseSecretName(k *v1alpha1.Keystone) string { return k.Name + "-openid-passphrase" }

// AdminPasswordDataKey is the key of the admin password in the Secret
// AdminPasswordSecretName; the bootstrap Job reads it into OS_BOOTSTRAP_PASSWORD.
const AdminPasswordDataKey = "password"

// DatabasePasswordDataKey is the key of the first account's database password in the
// Secret DatabasePasswordSecretName; its mariadb-operator User reads it from there.
const DatabasePasswordDataKey = "password"

// ServicePort is the port of the identity API's Service and container.
const ServicePort = 5000

// Endpoint is the cluster-local URL of a Keystone's Service, published as
// status.endpoint: http://<name>.<namespace>.svc:5000.
func Endpoint(k *v1alpha1.Keystone) string {
	return fmt.Sprintf("http://%s.%s.svc:%d", k.Name, k.Namespace, ServicePort)
}

// Labels are the labels of k's children of component ("api" for the API's
// Deployment, Service and the like; the Jobs and CronJobs name their own, which the
// API pods' selector leaves out).
func Labels(k *v1alpha1.Keystone, component string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":      "keystone",
		"app.kubernetes.io/instance":  k.Name,
		"app.kubernetes.io/component": component,
	}
}
