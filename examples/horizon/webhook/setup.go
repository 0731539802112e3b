package webhook

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/reconciler-sdk/admit"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
)

// SetupWebhookWithManager registers the Horizon webhooks on mgr's webhook server: the
// [Defaulter] at /mutate-horizon-openstack-c5c3-io-v1alpha1-horizon and the [Validator]
// at /validate-horizon-openstack-c5c3-io-v1alpha1-horizon, the paths of the webhook
// configurations in config/webhook. mgr's scheme must know Horizon
// (v1alpha1.AddToScheme); otherwise the error wraps admit.ErrNotInScheme and names
// the type.
func SetupWebhookWithManager(mgr ctrl.Manager) error {
	return admit.Register(mgr, &v1alpha1.Horizon{}, Defaulter{}, Validator{})
}
