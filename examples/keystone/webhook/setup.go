package webhook

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
)

// SetupWebhookWithManager registers the Keystone webhooks on mgr's webhook server: the
// [Defaulter] at /mutate-keystone-openstack-c5c3-io-v1alpha1-keystone, the [Validator]
// at /validate-keystone-openstack-c5c3-io-v1alpha1-keystone and the
// [IdentityBackendValidator] at
// /validate-keystone-openstack-c5c3-io-v1alpha1-keystoneidentitybackend, the paths of
// the webhook configurations in config/webhook. mgr's scheme must know both kinds
// (v1alpha1.AddToScheme); otherwise the error says so.
func SetupWebhookWithManager(mgr ctrl.Manager) error {
	err := ctrl.NewWebhookManagedBy(mgr, &v1alpha1.Keystone{}).
		WithDefaulter(Defaulter{}).
		WithValidator(Validator{}).
		Complete()
	if err != nil {
		return fmt.Errorf("register the Keystone admission webhooks: %w", err)
	}
	err = ctrl.NewWebhookManagedBy(mgr, &v1alpha1.KeystoneIdentityBackend{}).
		WithValidator(IdentityBackendValidator{}).
		Complete()
	if err != nil {
		return fmt.Errorf("register the KeystoneIdentityBackend admission webhook: %w", err)
	}
	return nil
}
