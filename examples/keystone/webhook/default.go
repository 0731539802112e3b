package webhook

import (
	"context"

	"github.com/c5c3/reconciler-sdk/admit"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/secrets"
)

// +kubebuilder:webhook:path=/mutate-keystone-openstack-c5c3-io-v1alpha1-keystone,mutating=true,failurePolicy=fail,sideEffects=None,groups=keystone.openstack.c5c3.io,resources=keystones,verbs=create;update,versions=v1alpha1,name=mkeystone.keystone.openstack.c5c3.io,admissionReviewVersions=v1

// Defaulter fills the fields of a Keystone whose default depends on the object's
// namespace or on another field, which a CRD default cannot express. Every other
// default (replicas, the database's name and account, the bootstrap's admin user and
// region, the key repositories' maxActiveKeys and rotationInterval, the token
// lifetimes, ...) is the CRD's. It is the admission Defaulter of the mutating webhook
// that [SetupWebhookWithManager] registers.
type Defaulter struct{}

// Default fills, in place and only where the field is empty:
//
//   - spec.secretStoreRef: when omitted, or when it names no store and is of kind
//     ClusterSecretStore (or of no kind), the shared ClusterSecretStore
//     openbao-cluster-store, the store secrets.EffectiveStoreRef resolves it to, so
//     the store the operator reads and backs up through is visible on the resource;
//   - spec.database.mariaDBRef.namespace: the Keystone's namespace, where the
//     operator looks for the MariaDB when it is empty;
//   - spec.gateway.parentRef.namespace: the Keystone's namespace, where the
//     HTTPRoute looks for the Gateway when it is empty.
//
// The Keystone's namespace is the object's or, when the object carries none, the
// admission request's in ctx. spec.bootstrap.publicURL stays empty when omitted: the
// public endpoint is then the Service URL, and setting it would add public_endpoint to
// keystone.conf and roll the pods out.
//
// A field that is set is never changed, so a second call changes nothing. Default
// never fails; the error is part of the admission.Defaulter contract.
func (Defaulter) Default(ctx context.Context, k *v1alpha1.Keystone) error {
	ns, spec := admit.Namespace(ctx, k), &k.Spec
	if ref := &spec.Database.MariaDBRef; ref.Namespace == "" {
		ref.Namespace = ns
	}
	if g := spec.Gateway; g != nil && g.ParentRef.Namespace == "" {
		g.ParentRef.Namespace = ns
	}
	if ref := spec.SecretStoreRef; ref == nil || ref.Name == "" {
		eff := secrets.EffectiveStoreRef(ref) // a SecretStore without a name stays as it is
		spec.SecretStoreRef = &eff
	}
	return nil
}
