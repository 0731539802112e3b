package webhook

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
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

var _ admission.Defaulter[*v1alpha1.Keystone] = Defaulter{}

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
	spec := &k.Spec

	if ref := spec.SecretStoreRef; ref == nil {
		eff := secrets.EffectiveStoreRef(nil)
		spec.SecretStoreRef = &eff
	} else if ref.Name == "" && (ref.Kind == "" || ref.Kind == commonv1.ClusterSecretStoreKind) {
		*ref = secrets.EffectiveStoreRef(ref)
	}

	if ref := &spec.Database.MariaDBRef; ref.Namespace == "" {
		ref.Namespace = namespaceOf(ctx, k)
	}

	if g := spec.Gateway; g != nil && g.ParentRef.Namespace == "" {
		g.ParentRef.Namespace = namespaceOf(ctx, k)
	}
	return nil
}

// namespaceOf is k's namespace, or the namespace of the admission request in ctx when
// k carries none; empty when neither names one.
func namespaceOf(ctx context.Context, k *v1alpha1.Keystone) string {
	if k.Namespace != "" {
		return k.Namespace
	}
	if req, err := admission.RequestFromContext(ctx); err == nil {
		return req.Namespace
	}
	return ""
}
