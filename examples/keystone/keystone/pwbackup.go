package keystone

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// PasswordRestoreName is the restore ExternalSecret of the database password, and the
// Secret it writes (the restore copy): the password Secret's name followed by
// "-restore".
func PasswordRestoreName(k *v1alpha1.Keystone) string {
	return names.DatabasePasswordSecretName(k) + "-restore"
}

// desiredPasswordRestore syncs the backup at PasswordRemoteKey, every data key of the
// password Secret, into the restore copy. Its deletionPolicy Delete makes ESO answer a
// backend that holds nothing with Ready=True, reason SecretDeleted, so a first install
// needs no manual step (secrets.EnsureGeneratedSecret, "First install or pending
// restore").
func desiredPasswordRestore(k *v1alpha1.Keystone, fieldManager string) *esov1.ExternalSecret {
	return &esov1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Name: PasswordRestoreName(k), Namespace: k.Namespace,
			Labels: names.Labels(k, "password-rotation")},
		Spec: esov1.ExternalSecretSpec{
			SecretStoreRef:  secrets.ESOSecretStoreRef(secrets.EffectiveStoreRef(k.Spec.SecretStoreRef)),
			RefreshInterval: &metav1.Duration{Duration: DefaultBackupRefreshInterval},
			Target: esov1.ExternalSecretTarget{
				Name:           PasswordRestoreName(k),
				DeletionPolicy: esov1.DeletionPolicyDelete,
				Template: &esov1.ExternalSecretTemplate{Metadata: esov1.ExternalSecretTemplateMetadata{
					Labels: map[string]string{apply.ManagedByLabel: fieldManager},
				}},
			},
			DataFrom: []esov1.ExternalSecretDataFromRemoteRef{{Extract: &esov1.ExternalSecretDataRemoteRef{Key: PasswordRemoteKey(k)}}},
		},
	}
}

// restorePasswordSecret creates the missing password Secret gs.Key from the restore
// copy gs.RestoreFrom when the copy holds a password: every data key of the copy is
// taken, so the accounts' passwords and a rotation in progress come back as they were
// backed up. It reports whether it created the Secret. When the Secret exists, or the
// copy holds no password, it writes nothing and secrets.EnsureGeneratedSecret decides
// (keep, restore pending, or generate on a first install).
func restorePasswordSecret(ctx context.Context, c client.Client, k *v1alpha1.Keystone, gs secrets.GeneratedSecret) (bool, error) {
	existing := &corev1.Secret{}
	err := c.Get(ctx, gs.Key, existing)
	switch {
	case err == nil:
		return false, nil
	case !apierrors.IsNotFound(err):
		return false, fmt.Errorf("get Secret %s: %w", gs.Key, err)
	}
	copyOf := &corev1.Secret{}
	if err := c.Get(ctx, *gs.RestoreFrom, copyOf); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("get restore copy Secret %s: %w", gs.RestoreFrom, err)
	}
	if len(copyOf.Data[gs.DataKey]) == 0 {
		return false, nil
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: gs.Key.Name, Namespace: gs.Key.Namespace, Labels: gs.Labels},
		Type:       corev1.SecretTypeOpaque,
		Data:       copyOf.Data,
	}
	if err := apply.SetOwnership(c, c.Scheme(), k, secret); err != nil {
		return false, fmt.Errorf("restore Secret %s: %w", gs.Key, err)
	}
	if err := c.Create(ctx, secret); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return false, nil
		}
		return false, fmt.Errorf("restore Secret %s from Secret %s: %w", gs.Key, gs.RestoreFrom, err)
	}
	apply.Record(ctx, apply.Write{Action: apply.ActionCreated, GVK: corev1.SchemeGroupVersion.WithKind("Secret"), Key: gs.Key})
	log.FromContext(ctx).Info("restored the database password Secret from the backend", "secret", gs.Key.String(),
		"restoredFrom", gs.RestoreFrom.String())
	return true, nil
}
