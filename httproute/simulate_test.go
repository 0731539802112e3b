package httproute_test

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// setAccepted writes the Gateway's verdict on the route at its current generation.
func setAccepted(ctx context.Context, c client.Client, key client.ObjectKey, status metav1.ConditionStatus, reason, msg string) error {
	return setAcceptedAt(ctx, c, key, status, reason, msg, 0)
}

// setAcceptedAt is setAccepted with an explicit observedGeneration (0: the current one).
func setAcceptedAt(ctx context.Context, c client.Client, key client.ObjectKey, status metav1.ConditionStatus, reason, msg string, observed int64) error {
	_, err := simulate.SetHTTPRouteAccepted(ctx, c, key, status, reason, msg, observed)
	return err
}
