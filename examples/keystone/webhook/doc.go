// Package webhook holds the admission webhooks of the example Keystone operator: a
// mutating one for Keystone that fills the defaults a CRD cannot express, and
// validating ones for Keystone and KeystoneIdentityBackend that refuse, before they are
// stored, what the controllers would refuse for good from the object alone.
//
// # Defaulting
//
// The CRD defaults almost every Keystone field (replicas, the database's name and
// account, the bootstrap's admin user and region, maxActiveKeys and rotationInterval
// of both key repositories, the token lifetimes, ...); [Defaulter.Default] fills only
// the three whose default depends on the object, and only where they are empty:
//
//   - spec.secretStoreRef with the shared ClusterSecretStore openbao-cluster-store
//     (secrets.EffectiveStoreRef), so the store in use is visible on the resource;
//   - spec.database.mariaDBRef.namespace with the Keystone's namespace;
//   - spec.gateway.parentRef.namespace with the Keystone's namespace.
//
// Each is the value the controller uses for the empty field, so defaulting changes
// nothing the operator does. A KeystoneIdentityBackend has no defaulting webhook: its
// only default, driver ldap, is the CRD's.
//
// # Validation
//
// [Validator] refuses a Keystone, on create and update, with an Invalid error (HTTP
// 422) that lists every problem by field path:
//
//   - a key rotation that would remove a key a valid token may still need, the check
//     the key repository steps run (keystone.FernetRotationSettings and
//     keystone.CredentialRotationSettings, Check, keys.CheckRotationSafety), on
//     spec.fernet.maxActiveKeys or spec.credential.maxActiveKeys with the smallest
//     safe value; a rotation number that makes no sense on its own on its field;
//   - whatever settings.Render refuses for keystone.conf (keystone.CheckSettings),
//     on the field it is about, such as spec.extraConfig[database][connection], or on
//     spec where no single field produces it; a field the rotation check already
//     names is not named twice.
//
// [IdentityBackendValidator] refuses a KeystoneIdentityBackend whose domain file
// cannot be rendered whatever its bind password (identitybackend.CheckDomainConfig):
// above all a spec.config that sets [ldap] password, which must come from
// spec.passwordSecretRef (Forbidden on spec.config[ldap][password]); a domain name
// settings.DomainConfig refuses (Invalid on spec.domain); a section or option that
// cannot be written to the domain file (Invalid on spec.config[section][option]).
//
// Messages name fields and option names, never an extraConfig or config value. On
// update only problems the old object did not have are refused; one carried over
// unchanged becomes a warning (admit.Validator's rule), so an object stored before the
// webhook existed can still be edited and released by its finalizers. Deletion is
// always admitted.
//
// # Wiring
//
// [SetupWebhookWithManager] registers all three on a manager's webhook server
// (admit.Register). The kubebuilder markers in this package make `make generate` write
// the webhook configurations to examples/keystone/config/webhook/manifests.yaml (a
// MutatingWebhookConfiguration and a ValidatingWebhookConfiguration for create and
// update, failurePolicy Fail, no side effects); deploy them with a Service and a
// serving certificate in front of the manager. The tests install the same manifests
// into envtest (testenv.Options.WebhookPaths) and let the real API server call the
// webhooks.
package webhook
