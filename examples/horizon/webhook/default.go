package webhook

import (
	"context"

	"github.com/c5c3/reconciler-sdk/admit"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/secrets"
)

// +kubebuilder:webhook:path=/mutate-horizon-openstack-c5c3-io-v1alpha1-horizon,mutating=true,failurePolicy=fail,sideEffects=None,groups=horizon.openstack.c5c3.io,resources=horizons,verbs=create;update,versions=v1alpha1,name=mhorizon.horizon.openstack.c5c3.io,admissionReviewVersions=v1

// Defaulter fills the fields of a Horizon whose default depends on other fields or on
// the object's namespace, which a CRD default cannot express. It is the admission
// Defaulter of the mutating webhook that [SetupWebhookWithManager] registers.
type Defaulter struct{}

// Default fills, in place and only where the field is empty:
//
//   - spec.secretStoreRef: when omitted, or when it names no store and is of kind
//     ClusterSecretStore (or of no kind), the shared ClusterSecretStore
//     openbao-cluster-store, the store secrets.EffectiveStoreRef resolves it to, so
//     the store the operator reads through is visible on the resource;
//   - spec.websso.initialChoice: with websso enabled and at least one choice, the id
//     of the first choice, which the login page preselects anyway;
//   - spec.gateway.parentRef.namespace: the Horizon's namespace, taken from the object
//     or, when the object carries none, from the admission request in ctx.
//
// A field that is set is never changed, so a second call changes nothing. Default
// never fails; the error is part of the admission.Defaulter contract.
func (Defaulter) Default(ctx context.Context, h *v1alpha1.Horizon) error {
	spec := &h.Spec

	if ref := spec.SecretStoreRef; ref == nil || ref.Name == "" {
		eff := secrets.EffectiveStoreRef(ref) // a SecretStore without a name stays as it is
		spec.SecretStoreRef = &eff
	}

	if w := spec.WebSSO; w != nil && w.Enabled && w.InitialChoice == "" && len(w.Choices) > 0 {
		w.InitialChoice = w.Choices[0].ID
	}

	if g := spec.Gateway; g != nil && g.ParentRef.Namespace == "" {
		g.ParentRef.Namespace = admit.Namespace(ctx, h)
	}
	return nil
}
