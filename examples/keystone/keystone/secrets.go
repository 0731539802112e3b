package keystone

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// reconcileSecrets is the Secrets row: the selected secret store must be ready, then
// the ExternalSecret must have synced the admin password Secret.
func (r *Reconciler) reconcileSecrets(ctx context.Context, k *v1alpha1.Keystone) (ctrl.Result, error) {
	target := r.targetOf(ctx)
	ref := secrets.EffectiveStoreRef(k.Spec.SecretStoreRef)
	ready, err := secrets.GateStoreReady(ctx, target.Client, ref, k.Namespace, r.opts.NamespaceScoped,
		k.Conditions(), k.Generation, ConditionSecretsReady)
	if err != nil || !ready {
		return requeueUnlessErr(secrets.PollInterval, err)
	}
	es := desiredExternalSecret(k, r.opts.FieldManager)
	if err := apply.EnsureObject(ctx, target.Client, target.Client.Scheme(), k, es, r.opts.FieldManager); err != nil {
		return secretsFailed(k, err)
	}
	key := client.ObjectKey{Namespace: k.Namespace, Name: names.AdminPasswordSecretName(k)}
	exists, synced, err := secrets.WaitForExternalSecret(ctx, target.Client, key)
	if err != nil {
		return secretsFailed(k, err)
	}
	if !exists || !synced {
		reconcile.MarkFalse(k, ConditionSecretsReady, ReasonWaitingForAdminPassword,
			fmt.Sprintf("waiting for ExternalSecret %s to sync remote key %q", key, k.Spec.Bootstrap.AdminPassword.RemoteKey))
		return ctrl.Result{RequeueAfter: secrets.PollInterval}, nil
	}
	value, err := secrets.GetSecretValue(ctx, target.Client, key, names.AdminPasswordDataKey)
	switch {
	case apierrors.IsNotFound(err) || errors.Is(err, secrets.ErrKeyNotFound) || (err == nil && value == ""):
		reconcile.MarkFalse(k, ConditionSecretsReady, ReasonWaitingForAdminPassword,
			fmt.Sprintf("Secret %s holds no %q yet", key, names.AdminPasswordDataKey))
		return ctrl.Result{RequeueAfter: secrets.PollInterval}, nil
	case err != nil:
		return secretsFailed(k, err)
	}
	reconcile.MarkTrue(k, ConditionSecretsReady, ReasonSecretsAvailable,
		fmt.Sprintf("admin password synced into Secret %s", key))
	return ctrl.Result{}, nil
}

// secretsFailed reports a failed API call of the Secrets row as SecretsReady False
// (reason SecretsError, the error's text, which names objects and never a value) and
// returns the error, so the pass retries with back-off and the CR does not keep
// reporting the Ready of an earlier pass.
func secretsFailed(k *v1alpha1.Keystone, err error) (ctrl.Result, error) {
	reconcile.MarkFalse(k, ConditionSecretsReady, ReasonSecretsError, err.Error())
	return ctrl.Result{}, err
}

// desiredExternalSecret is the ExternalSecret that syncs spec.bootstrap.adminPassword
// from the selected store into the Secret names.AdminPasswordSecretName(k). The Secret
// carries the operator's managed-by label, so the operator's label-filtered cache
// (apply.CacheOptions) and its Secret watch see it.
func desiredExternalSecret(k *v1alpha1.Keystone, fieldManager string) *esov1.ExternalSecret {
	p := k.Spec.Bootstrap.AdminPassword
	return &esov1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Name: names.AdminPasswordSecretName(k), Namespace: k.Namespace, Labels: labels(k)},
		Spec: esov1.ExternalSecretSpec{
			SecretStoreRef: secrets.ESOSecretStoreRef(secrets.EffectiveStoreRef(k.Spec.SecretStoreRef)),
			Target: esov1.ExternalSecretTarget{
				Name: names.AdminPasswordSecretName(k),
				Template: &esov1.ExternalSecretTemplate{Metadata: esov1.ExternalSecretTemplateMetadata{
					Labels: map[string]string{apply.ManagedByLabel: fieldManager},
				}},
			},
			Data: []esov1.ExternalSecretData{{
				SecretKey: names.AdminPasswordDataKey,
				RemoteRef: esov1.ExternalSecretDataRemoteRef{Key: p.RemoteKey, Property: p.Property},
			}},
		},
	}
}

// requeueUnlessErr returns err alone when it is set (the error wins: a step never
// returns a result together with an error), else a requeue after d.
func requeueUnlessErr(d time.Duration, err error) (ctrl.Result, error) {
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: d}, nil
}
