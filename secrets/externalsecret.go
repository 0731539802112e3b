package secrets

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// WaitForExternalSecret reports whether the ExternalSecret at key exists and whether
// ESO has synced it (its esov1.ExternalSecretReady condition has status True). It is a
// point-in-time check, not a blocking wait: call it on every pass and requeue while
// ready is false.
//
// It returns (false, false, nil) when the ExternalSecret is not found, (true, false,
// nil) when it exists but has not synced, (true, true, nil) when it is Ready, and
// (false, false, err) on any other client failure, wrapped with the ExternalSecret's
// namespace/name. The separate exists result lets the caller say "ExternalSecret not
// found yet" rather than "waiting for ESO to sync".
func WaitForExternalSecret(
	ctx context.Context,
	c client.Client,
	key client.ObjectKey,
) (exists, ready bool, err error) {
	es := &esov1.ExternalSecret{}
	if err := c.Get(ctx, key, es); err != nil {
		if apierrors.IsNotFound(err) {
			return false, false, nil
		}
		return false, false, fmt.Errorf("get ExternalSecret %s: %w", key, err)
	}
	for _, cond := range es.Status.Conditions {
		if cond.Type == esov1.ExternalSecretReady {
			return true, cond.Status == corev1.ConditionTrue, nil
		}
	}
	return true, false, nil
}
