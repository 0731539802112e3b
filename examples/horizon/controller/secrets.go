package controller

import (
	"context"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// SecretKeyDataKey is the key of the SECRET_KEY in the Secret that External Secrets
// Operator syncs; the pods read it into the HORIZON_SECRET_KEY environment variable.
const SecretKeyDataKey = "secret-key"

// SecretKeyHashAnnotation is the pod-template annotation that digests the SECRET_KEY
// (secrets.Digest): when ESO syncs a new key, the digest changes and the Deployment
// rolls, because the key is read from the environment at start-up.
const SecretKeyHashAnnotation = "horizon.openstack.c5c3.io/secret-key-hash"

// SecretKeyName is the name of a Horizon's ExternalSecret and of the Secret it syncs:
// the Horizon's name followed by "-secret-key".
func SecretKeyName(h *v1alpha1.Horizon) string { return h.Name + "-secret-key" }

// reconcileSecrets is the Secrets row, the SDK's Secrets flow (secrets.Sync): the
// selected secret store must be ready, then the ExternalSecret must have synced the
// SECRET_KEY Secret, whose digest is handed to the Deployment's pod template.
func (r *Reconciler) reconcileSecrets(ctx context.Context, h *v1alpha1.Horizon) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	name := SecretKeyName(h)
	synced, err := secrets.Sync(ctx, target.Client, target.Client.Scheme(), h, secrets.SyncParams{
		ConditionType:   ConditionSecretsReady,
		WaitingReason:   ReasonWaitingForSecretKey,
		ReadyMessage:    "SECRET_KEY synced into Secret " + h.Namespace + "/" + name,
		StoreRef:        h.Spec.SecretStoreRef,
		NamespaceScoped: r.opts.NamespaceScoped,
		Name:            name,
		Data: []esov1.ExternalSecretData{{SecretKey: SecretKeyDataKey, RemoteRef: esov1.ExternalSecretDataRemoteRef{
			Key: h.Spec.SecretKey.RemoteKey, Property: h.Spec.SecretKey.Property}}},
		RefreshInterval: h.Spec.SecretKey.RefreshInterval,
		Labels:          labels(h),
	})
	reconcile.StateFrom[passState](ctx).secretKeyHash = synced.Digest
	return synced.Outcome, err
}
