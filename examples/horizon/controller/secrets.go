package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// SecretKeyDataKey is the key of the SECRET_KEY in the Secret that External Secrets
// Operator syncs; the pods read it into the HORIZON_SECRET_KEY environment variable.
const SecretKeyDataKey = "secret-key"

// SecretKeyHashAnnotation is the pod-template annotation that digests the SECRET_KEY:
// when ESO syncs a new key, the digest changes and the Deployment rolls, because the
// key is read from the environment at start-up.
const SecretKeyHashAnnotation = "horizon.openstack.c5c3.io/secret-key-hash"

// SecretKeyName is the name of a Horizon's ExternalSecret and of the Secret it syncs:
// the Horizon's name followed by "-secret-key".
func SecretKeyName(h *v1alpha1.Horizon) string { return h.Name + "-secret-key" }

// reconcileSecrets is the Secrets row: the selected secret store must be ready, then
// the ExternalSecret must have synced the SECRET_KEY Secret, whose key is digested for
// the Deployment's pod template.
func (r *Reconciler) reconcileSecrets(ctx context.Context, h *v1alpha1.Horizon) (ctrl.Result, error) {
	target := r.targetOf(ctx)
	ref := secrets.EffectiveStoreRef(h.Spec.SecretStoreRef)
	ready, err := secrets.GateStoreReady(ctx, target.Client, ref, h.Namespace, r.opts.NamespaceScoped,
		h.Conditions(), h.Generation, ConditionSecretsReady)
	if err != nil || !ready {
		return requeueUnlessErr(reconcile.SecretPollInterval, err)
	}
	es := desiredExternalSecret(h, r.opts.FieldManager)
	if err := apply.EnsureObject(ctx, target.Client, target.Client.Scheme(), h, es, r.opts.FieldManager); err != nil {
		return ctrl.Result{}, secretsError(h, err)
	}
	key := client.ObjectKey{Namespace: h.Namespace, Name: SecretKeyName(h)}
	exists, synced, err := secrets.WaitForExternalSecret(ctx, target.Client, key)
	if err != nil {
		return ctrl.Result{}, secretsError(h, err)
	}
	if !exists || !synced {
		reconcile.MarkFalse(h, ConditionSecretsReady, ReasonWaitingForSecretKey,
			fmt.Sprintf("waiting for ExternalSecret %s to sync remote key %q", key, h.Spec.SecretKey.RemoteKey))
		return ctrl.Result{RequeueAfter: reconcile.SecretPollInterval}, nil
	}
	value, err := secrets.GetSecretValue(ctx, target.Client, key, SecretKeyDataKey)
	switch {
	case apierrors.IsNotFound(err) || errors.Is(err, secrets.ErrKeyNotFound) || (err == nil && value == ""):
		reconcile.MarkFalse(h, ConditionSecretsReady, ReasonWaitingForSecretKey,
			fmt.Sprintf("Secret %s holds no %q yet", key, SecretKeyDataKey))
		return ctrl.Result{RequeueAfter: reconcile.SecretPollInterval}, nil
	case err != nil:
		return ctrl.Result{}, secretsError(h, err)
	}
	reconcile.StateFrom[passState](ctx).secretKeyHash = digest(value)
	reconcile.MarkTrue(h, ConditionSecretsReady, ReasonSecretsAvailable,
		fmt.Sprintf("SECRET_KEY synced into Secret %s", key))
	return ctrl.Result{}, nil
}

// secretsError sets SecretsReady False with ReasonSecretsError and err's message (which
// names objects, never a value), so that a failed call shows in the status, and returns
// err.
func secretsError(h *v1alpha1.Horizon, err error) error {
	reconcile.MarkFalse(h, ConditionSecretsReady, ReasonSecretsError, err.Error())
	return err
}

// desiredExternalSecret is the ExternalSecret that syncs spec.secretKey from the
// selected store into the Secret SecretKeyName(h). The Secret carries the operator's
// managed-by label, so the operator's label-filtered cache (apply.CacheOptions) and its
// Secret watch see it.
func desiredExternalSecret(h *v1alpha1.Horizon, fieldManager string) *esov1.ExternalSecret {
	return &esov1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Name: SecretKeyName(h), Namespace: h.Namespace, Labels: labels(h)},
		Spec: esov1.ExternalSecretSpec{
			SecretStoreRef:  secrets.ESOSecretStoreRef(secrets.EffectiveStoreRef(h.Spec.SecretStoreRef)),
			RefreshInterval: h.Spec.SecretKey.RefreshInterval,
			Target: esov1.ExternalSecretTarget{
				Name: SecretKeyName(h),
				Template: &esov1.ExternalSecretTemplate{Metadata: esov1.ExternalSecretTemplateMetadata{
					Labels: map[string]string{apply.ManagedByLabel: fieldManager},
				}},
			},
			Data: []esov1.ExternalSecretData{{
				SecretKey: SecretKeyDataKey,
				RemoteRef: esov1.ExternalSecretDataRemoteRef{
					Key: h.Spec.SecretKey.RemoteKey, Property: h.Spec.SecretKey.Property,
				},
			}},
		},
	}
}

// digest is the first 16 hex digits of the SHA-256 of the key: enough to tell keys
// apart, useless for recovering one.
func digest(value string) string {
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:8])
}

// requeueUnlessErr returns err alone when it is set (the error wins: a step never
// returns a result together with an error), else a requeue after d.
func requeueUnlessErr(d time.Duration, err error) (ctrl.Result, error) {
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: d}, nil
}
