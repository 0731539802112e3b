package secrets

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// WaitForExternalSecret reports, at this instant, whether the ExternalSecret at key
// exists and whether ESO has synced its current spec (the rule is in "Gates" in the
// package documentation): (false, false, nil) when not found, (true, false, nil) when
// not synced, (true, true, nil) when Ready, (false, false, err) on another failure,
// wrapped with the namespace/name. Call it on every pass; requeue while not ready.
func WaitForExternalSecret(
	ctx context.Context,
	c client.Client,
	key client.ObjectKey,
) (exists, ready bool, err error) {
	es, err := getExternalSecret(ctx, c, key)
	if err != nil || es == nil {
		return false, false, err
	}
	ready, _ = externalSecretSynced(es)
	return true, ready, nil
}

// getExternalSecret reads the ExternalSecret at key; (nil, nil) when it does not exist.
func getExternalSecret(ctx context.Context, c client.Client, key client.ObjectKey) (*esov1.ExternalSecret, error) {
	es := &esov1.ExternalSecret{}
	if err := c.Get(ctx, key, es); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get ExternalSecret %s: %w", key, err)
	}
	return es, nil
}

// externalSecretSynced reports whether es has a Ready=True condition for its current
// generation; when it has not, why says what it has instead (never a value).
func externalSecretSynced(es *esov1.ExternalSecret) (synced bool, why string) {
	cond := readyCondition(es)
	switch {
	case cond == nil:
		return false, "has not synced yet"
	case cond.Status != corev1.ConditionTrue:
		return false, fmt.Sprintf("is Ready=%s (reason %s)", cond.Status, cond.Reason)
	}
	gen, ok := syncedGeneration(es.Status.SyncedResourceVersion)
	switch {
	case !ok:
		return false, fmt.Sprintf("is Ready=True without a valid status.syncedResourceVersion (%q)",
			es.Status.SyncedResourceVersion)
	case gen != es.Generation:
		return false, fmt.Sprintf("is Ready=True for generation %d, not for the current generation %d",
			gen, es.Generation)
	}
	return true, ""
}

// readyCondition returns es's Ready condition, nil when it has none.
func readyCondition(es *esov1.ExternalSecret) *esov1.ExternalSecretStatusCondition {
	for i := range es.Status.Conditions {
		if es.Status.Conditions[i].Type == esov1.ExternalSecretReady {
			return &es.Status.Conditions[i]
		}
	}
	return nil
}

// syncedGeneration parses the generation out of ESO's syncedResourceVersion,
// "<generation>-<hash>" (a bare "<generation>" is accepted too).
func syncedGeneration(v string) (int64, bool) {
	gen, _, _ := strings.Cut(v, "-")
	if gen == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(gen, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}
