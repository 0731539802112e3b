// Package webhook holds the admission webhooks of the example Horizon operator: a
// mutating one that fills the defaults a CRD cannot express, and a validating one that
// refuses what the CRD schema cannot see, so that a Horizon the API server stores is
// one the controller can act on.
//
// # Defaulting
//
// [Defaulter.Default] fills, only where they are empty:
//
//   - spec.secretStoreRef with the shared ClusterSecretStore openbao-cluster-store
//     (secrets.EffectiveStoreRef), so the store in use is visible on the resource;
//   - spec.websso.initialChoice, with websso enabled, with the id of the first choice;
//   - spec.gateway.parentRef.namespace with the Horizon's namespace.
//
// A value that is set is never changed, and defaulting a defaulted Horizon changes
// nothing. Each default is documented on its field of the Horizon type.
//
// # Validation
//
// [Validator] refuses, on create and update, with an Invalid error (HTTP 422) that
// lists every problem by field path:
//
//   - an extraConfig key that a typed field also sets: settings.DeclaredSettings of
//     settings.FromSpec names the settings the websso and multiDomain fields render,
//     and extraConfig.WEBSSO_CHOICES next to websso.choices would silently override
//     the typed field, so both are named ("spec.extraConfig.WEBSSO_CHOICES:
//     Forbidden: also set by spec.websso.choices; remove one of them");
//   - with websso enabled and websso.identityBackends set,
//     extraConfig.WEBSSO_CHOICES and extraConfig.WEBSSO_IDP_MAPPING, which would
//     override the choices and mappings the identity backends' providers add
//     ("also set by spec.websso.identityBackends");
//   - a websso.identityBackends name that is not a DNS subdomain name, or one listed
//     twice (the CRD's own checks, repeated for a CRD installed without them);
//   - a networkPolicy without ingress rules, which would cut the dashboard off the
//     network;
//   - whatever settings.Render refuses, with Render's text on the field it is about.
//
// Messages name fields and extraConfig keys but never echo an extraConfig value. On
// update only problems the old object did not have are refused; one carried over
// unchanged becomes a warning (admit.Validator's rule), so a Horizon stored before the
// webhook existed can still be edited and released by its finalizers. Deletion is
// always admitted.
//
// # Wiring
//
// [SetupWebhookWithManager] registers both on a manager's webhook server
// (admit.Register). The kubebuilder markers in this package make `make generate` write
// the webhook configurations to examples/horizon/config/webhook/manifests.yaml (a
// MutatingWebhookConfiguration and a ValidatingWebhookConfiguration for create and
// update of horizons, failurePolicy Fail, no side effects); deploy them with a
// Service and a serving certificate in front of the manager. The tests install the
// same manifests into envtest (testenv.Options.WebhookPaths) and let the real API
// server call the webhooks.
package webhook
