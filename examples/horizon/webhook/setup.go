package webhook

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
)

// SetupWebhookWithManager registers the Horizon webhooks on mgr's webhook server: the
// [Defaulter] at /mutate-horizon-openstack-c5c3-io-v1alpha1-horizon and the [Validator]
// at /validate-horizon-openstack-c5c3-io-v1alpha1-horizon, the paths of the webhook
// configurations in config/webhook. mgr's scheme must know Horizon
// (v1alpha1.AddToScheme); otherwise the error says so.
func SetupWebhookWithManager(mgr ctrl.Manager) error {
	err := ctrl.NewWebhookManagedBy(mgr, &v1alpha1.Horizon{}).
		WithDefaulter(Defaulter{}).
		WithValidator(Validator{}).
		Complete()
	if err != nil {
		return fmt.Errorf("register the Horizon admission webhooks: %w", err)
	}
	return nil
}
