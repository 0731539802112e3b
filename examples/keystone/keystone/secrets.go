package keystone

import (
	"context"
	"fmt"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// reconcileSecrets is the Secrets row, the SDK's Secrets flow (secrets.Sync): the selected secret
// store must be ready, then the ExternalSecret names.AdminPasswordSecretName(k) must
// have synced spec.bootstrap.adminPassword into the Secret of that name.
func (r *Reconciler) reconcileSecrets(ctx context.Context, k *v1alpha1.Keystone) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	name, p := names.AdminPasswordSecretName(k), k.Spec.Bootstrap.AdminPassword
	synced, err := secrets.Sync(ctx, target.Client, target.Client.Scheme(), k, secrets.SyncParams{
		ConditionType: ConditionSecretsReady,
		WaitingReason: ReasonWaitingForAdminPassword,
		ReadyMessage:  fmt.Sprintf("admin password synced into Secret %s/%s", k.Namespace, name),
		StoreRef:      k.Spec.SecretStoreRef, NamespaceScoped: r.opts.NamespaceScoped,
		Name: name, Labels: labels(k),
		Data: []esov1.ExternalSecretData{{
			SecretKey: names.AdminPasswordDataKey,
			RemoteRef: esov1.ExternalSecretDataRemoteRef{Key: p.RemoteKey, Property: p.Property},
		}},
	})
	return synced.Outcome, err
}
