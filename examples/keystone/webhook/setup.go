package webhook

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/reconciler-sdk/admit"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
)

// SetupWebhookWithManager registers the Keystone webhooks on mgr's webhook server: the
// [Defaulter] at /mutate-keystone-openstack-c5c3-io-v1alpha1-keystone, the [Validator]
// at /validate-keystone-openstack-c5c3-io-v1alpha1-keystone and the
// [IdentityBackendValidator] at
// /validate-keystone-openstack-c5c3-io-v1alpha1-keystoneidentitybackend, the paths of
// the webhook configurations in config/webhook. mgr's scheme must know both kinds
// (v1alpha1.AddToScheme); otherwise the error wraps admit.ErrNotInScheme and
// names the type.
func SetupWebhookWithManager(mgr ctrl.Manager) error {
	if err := admit.Register(mgr, &v1alpha1.Keystone{}, Defaulter{}, Validator{}); err != nil {
		return err
	}
	return admit.Register(mgr, &v1alpha1.KeystoneIdentityBackend{}, nil, IdentityBackendValidator{})
}
