package deployment_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/deployment"
)

// TestNilScheme: every exported function that takes a *runtime.Scheme refuses a nil one
// with an error wrapping apply.ErrNilScheme that names the object, before any request
// and without panicking.
func TestNilScheme(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	key := client.ObjectKey{Namespace: ns, Name: "web"}
	cases := map[string]struct {
		call  func(ctx context.Context, c client.Client) error
		names string
	}{
		"EnsureDeployment": {func(ctx context.Context, c client.Client) error {
			_, err := deployment.EnsureDeployment(ctx, c, nil, owner, desiredDeployment(ns, "web", nil))
			return err
		}, "Deployment " + ns + "/web"},
		"EnsureService": {func(ctx context.Context, c client.Client) error {
			return deployment.EnsureService(ctx, c, nil, owner, desiredService(ns, corev1.ServiceTypeClusterIP))
		}, "Service " + ns + "/web"},
		"EnsureService with pinned fields": {func(ctx context.Context, c client.Client) error {
			svc := desiredService(ns, corev1.ServiceTypeClusterIP)
			svc.Spec.ClusterIP = corev1.ClusterIPNone
			return deployment.EnsureService(ctx, c, nil, owner, svc)
		}, "Service " + ns + "/web"},
		"EnsurePodDisruptionBudget": {func(ctx context.Context, c client.Client) error {
			return deployment.EnsurePodDisruptionBudget(ctx, c, nil, owner, desiredPDB(ns, 1))
		}, "PodDisruptionBudget " + ns + "/web"},
		"ReconcileHPA wanted": {func(ctx context.Context, c client.Client) error {
			_, err := deployment.ReconcileHPA(ctx, c, nil, owner, key, desiredHPA(3))
			return err
		}, "HorizontalPodAutoscaler " + ns + "/web"},
		"ReconcileHPA not wanted": {func(ctx context.Context, c client.Client) error {
			_, err := deployment.ReconcileHPA(ctx, c, nil, owner, key, nil)
			return err
		}, "HorizontalPodAutoscaler " + ns + "/web"},
		"VPAFlow wanted": {func(ctx context.Context, c client.Client) error {
			cond, err := vpaFlow(ctx, c, nil, owner, []*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "web")})
			if cond.Reason != deployment.ReasonVPAError {
				t.Errorf("condition reason %q, want %q", cond.Reason, deployment.ReasonVPAError)
			}
			return err
		}, "VerticalPodAutoscaler"},
		"VPAFlow not wanted": {func(ctx context.Context, c client.Client) error {
			_, err := vpaFlow(ctx, c, nil, owner, nil)
			return err
		}, "VerticalPodAutoscaler"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, counter, err := env.CountingClient()
			if err != nil {
				t.Fatal(err)
			}
			err = tc.call(context.Background(), c)
			if !errors.Is(err, apply.ErrNilScheme) {
				t.Fatalf("err = %v, want apply.ErrNilScheme", err)
			}
			if !strings.Contains(err.Error(), tc.names) {
				t.Errorf("error %q does not name %q", err, tc.names)
			}
			if counter.Total() != 0 {
				t.Errorf("nil scheme sent %d requests, want 0", counter.Total())
			}
		})
	}
}
