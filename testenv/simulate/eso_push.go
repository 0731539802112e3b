package simulate

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
)

// Messages External Secrets Operator (v0.20) writes on a PushSecret's Ready condition.
const (
	// PushSecretSyncedMessage is the message of a successful push.
	PushSecretSyncedMessage = "PushSecret synced successfully"
	// PushSecretSyncedIfNotExistsMessage is the message of a successful push under
	// updatePolicy IfNotExists, which leaves values the provider already holds alone.
	PushSecretSyncedIfNotExistsMessage = PushSecretSyncedMessage + ". Existing secrets in providers unchanged."
)

// MarkPushSecretSynced stands in for External Secrets Operator (v0.20) pushing the
// PushSecret at key successfully, which envtest cannot do: it sets the Ready condition
// True with reason Synced and ESO's message, refreshTime to now, and
// status.syncedResourceVersion to what ESO computes from the PushSecret's metadata as
// it reads it, "<metadata.generation>-<SHA3-224 of its annotations and labels>" in
// ESO's own form. No provider is written.
//
// As in ESO, a PushSecret whose status already records a successful push of its
// current generation, labels and annotations is left as it is (ESO pushes it again
// only after spec.refreshInterval), and a PushSecret whose selected Secret
// (spec.selector.secret.name) does not exist is not pushed: it returns an error and
// writes nothing (ESO would report Ready=False; [MarkPushSecretFailed] writes that).
// It returns the PushSecret as stored.
func MarkPushSecretSynced(ctx context.Context, c client.Client, key client.ObjectKey) (*esov1alpha1.PushSecret, error) {
	ps := &esov1alpha1.PushSecret{}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, key, ps); err != nil {
			return err
		}
		if sel := ps.Spec.Selector.Secret; sel != nil && sel.Name != "" {
			src := client.ObjectKey{Namespace: ps.Namespace, Name: sel.Name}
			if err := c.Get(ctx, src, &corev1.Secret{}); err != nil {
				if apierrors.IsNotFound(err) {
					return fmt.Errorf("source Secret %s does not exist; ESO would not push", src)
				}
				return fmt.Errorf("get source Secret %s: %w", src, err)
			}
		}
		msg := PushSecretSyncedMessage
		if ps.Spec.UpdatePolicy == esov1alpha1.PushSecretUpdatePolicyIfNotExists {
			msg = PushSecretSyncedIfNotExistsMessage
		}
		if PushSecretSynced(ps) {
			return nil
		}
		setPushSecretReady(ps, corev1.ConditionTrue, esov1alpha1.ReasonSynced, msg)
		ps.Status.RefreshTime = metav1.Now()
		ps.Status.SyncedResourceVersion = esoResourceVersion(ps.ObjectMeta)
		return c.Status().Update(ctx, ps)
	})
	if err != nil {
		return nil, fmt.Errorf("simulate: mark PushSecret %s synced: %w", key, err)
	}
	return ps, nil
}

// PushSecretSynced reports whether ps's status records a successful push of its current
// generation, labels and annotations, with ESO's message for its updatePolicy: what
// [MarkPushSecretSynced] leaves, and what makes it write nothing.
func PushSecretSynced(ps *esov1alpha1.PushSecret) bool {
	msg := PushSecretSyncedMessage
	if ps.Spec.UpdatePolicy == esov1alpha1.PushSecretUpdatePolicyIfNotExists {
		msg = PushSecretSyncedIfNotExistsMessage
	}
	cond := pushSecretReady(ps)
	return cond != nil && cond.Status == corev1.ConditionTrue && cond.Reason == esov1alpha1.ReasonSynced &&
		cond.Message == msg && ps.Status.SyncedResourceVersion == esoResourceVersion(ps.ObjectMeta)
}

// MarkPushSecretFailed stands in for External Secrets Operator failing to push the
// PushSecret at key (the provider refused the write, the source Secret is missing):
// it sets the Ready condition False with reason Errored and message, and leaves
// refreshTime and status.syncedResourceVersion as they are, as ESO does. It returns
// the PushSecret as stored.
func MarkPushSecretFailed(ctx context.Context, c client.Client, key client.ObjectKey, message string) (*esov1alpha1.PushSecret, error) {
	ps := &esov1alpha1.PushSecret{}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, key, ps); err != nil {
			return err
		}
		setPushSecretReady(ps, corev1.ConditionFalse, esov1alpha1.ReasonErrored, message)
		return c.Status().Update(ctx, ps)
	})
	if err != nil {
		return nil, fmt.Errorf("simulate: mark PushSecret %s failed: %w", key, err)
	}
	return ps, nil
}

// pushSecretReady returns the Ready condition of ps, nil when it has none.
func pushSecretReady(ps *esov1alpha1.PushSecret) *esov1alpha1.PushSecretStatusCondition {
	for i := range ps.Status.Conditions {
		if ps.Status.Conditions[i].Type == esov1alpha1.PushSecretReady {
			return &ps.Status.Conditions[i]
		}
	}
	return nil
}

// setPushSecretReady writes the Ready condition of ps as ESO's SetPushSecretCondition
// does: lastTransitionTime is kept while the status does not change.
func setPushSecretReady(ps *esov1alpha1.PushSecret, status corev1.ConditionStatus, reason, msg string) {
	cond := esov1alpha1.PushSecretStatusCondition{
		Type: esov1alpha1.PushSecretReady, Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.Now(),
	}
	if cur := pushSecretReady(ps); cur != nil {
		if cur.Status == status {
			cond.LastTransitionTime = cur.LastTransitionTime
		}
		*cur = cond
		return
	}
	ps.Status.Conditions = append(ps.Status.Conditions, cond)
}
