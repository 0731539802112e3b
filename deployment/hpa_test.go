package deployment_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

func desiredHPA(maxReplicas int32) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    new(int32(2)),
			MaxReplicas:    maxReplicas,
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{Name: "cpu", Target: autoscalingv2.MetricTarget{
					Type: autoscalingv2.UtilizationMetricType, AverageUtilization: new(int32(80)),
				}},
			}},
		},
	}
}

func wantCondition(t *testing.T, got metav1.Condition, condType string, status metav1.ConditionStatus, reason string, msgParts ...string) {
	t.Helper()
	if got.Type != condType || got.Status != status || got.Reason != reason {
		t.Errorf("condition = %s/%s/%s (%q), want %s/%s/%s", got.Type, got.Status, got.Reason, got.Message, condType, status, reason)
	}
	for _, p := range msgParts {
		if !strings.Contains(got.Message, p) {
			t.Errorf("condition message %q does not mention %q", got.Message, p)
		}
	}
}

func TestReconcileHPALifecycle(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	key := client.ObjectKey{Namespace: ns, Name: "web"}

	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}

	// Not wanted, nothing there: True/HPANotRequired, no write.
	cond, err := deployment.ReconcileHPA(ctx, c, env.Scheme, owner, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantCondition(t, cond, deployment.ConditionHPAReady, metav1.ConditionTrue, deployment.ReasonHPANotRequired)
	if counter.Writes() != 0 {
		t.Errorf("not wanted and absent: %d writes, want 0", counter.Writes())
	}

	// Wanted: applied with the owner as controller; True/HPAReady.
	hpa := desiredHPA(5)
	cond, err = deployment.ReconcileHPA(ctx, c, env.Scheme, owner, key, hpa)
	if err != nil {
		t.Fatal(err)
	}
	wantCondition(t, cond, deployment.ConditionHPAReady, metav1.ConditionTrue, deployment.ReasonHPAReady, "HorizontalPodAutoscaler "+key.String(), "Deployment web", "between 2 and 5")
	if ref := metav1.GetControllerOf(hpa); ref == nil || ref.UID != owner.UID {
		t.Fatalf("controller reference = %+v, want owner %s", ref, owner.UID)
	}

	// Converged: the control check's GET and one no-op apply.
	counter.Reset()
	again := desiredHPA(5)
	if _, err := deployment.ReconcileHPA(ctx, c, env.Scheme, owner, key, again); err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != hpa.ResourceVersion || counter.Total() != 2 || counter.Method("GET") != 1 || counter.Writes() != 1 {
		t.Errorf("converged: rv %s -> %s, %d requests (GET %d, writes %d); want unchanged rv, one GET and one apply",
			hpa.ResourceVersion, again.ResourceVersion, counter.Total(), counter.Method("GET"), counter.Writes())
	}

	// Changed: applied.
	changed := desiredHPA(8)
	if _, err := deployment.ReconcileHPA(ctx, c, env.Scheme, owner, key, changed); err != nil {
		t.Fatal(err)
	}
	stored := &autoscalingv2.HorizontalPodAutoscaler{}
	if err := env.Client.Get(ctx, key, stored); err != nil {
		t.Fatal(err)
	}
	if stored.Spec.MaxReplicas != 8 || stored.Generation == hpa.Generation {
		t.Errorf("stored maxReplicas = %d at generation %d (was %d), want 8 at a new generation",
			stored.Spec.MaxReplicas, stored.Generation, hpa.Generation)
	}

	// No longer wanted: deleted, True/HPANotRequired.
	cond, err = deployment.ReconcileHPA(ctx, c, env.Scheme, owner, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantCondition(t, cond, deployment.ConditionHPAReady, metav1.ConditionTrue, deployment.ReasonHPANotRequired)
	if err := env.Client.Get(ctx, key, &autoscalingv2.HorizontalPodAutoscaler{}); !apierrors.IsNotFound(err) {
		t.Errorf("HPA after opt-out: err = %v, want NotFound", err)
	}
}

// TestReconcileHPALeavesForeignHPA: an HPA with the same name that the owner does not
// control is not deleted.
func TestReconcileHPALeavesForeignHPA(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	other := newOwner(t, ns, "someone-else")
	key := client.ObjectKey{Namespace: ns, Name: "web"}
	if _, err := deployment.ReconcileHPA(ctx, env.Client, env.Scheme, other, key, desiredHPA(5)); err != nil {
		t.Fatal(err)
	}
	cond, err := deployment.ReconcileHPA(ctx, env.Client, env.Scheme, owner, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantCondition(t, cond, deployment.ConditionHPAReady, metav1.ConditionTrue, deployment.ReasonHPANotRequired, "not controlled", "left in place")
	if err := env.Client.Get(ctx, key, &autoscalingv2.HorizontalPodAutoscaler{}); err != nil {
		t.Errorf("foreign HPA: %v, want it kept", err)
	}
}

func TestReconcileHPAErrors(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	key := client.ObjectKey{Namespace: ns, Name: "web"}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "autoscaling", Resource: "horizontalpodautoscalers"}, "web", errors.New("denied"))

	cases := map[string]struct {
		client  func(t *testing.T) client.Client
		owner   client.Object
		key     client.ObjectKey
		desired *autoscalingv2.HorizontalPodAutoscaler
		is      func(error) bool
	}{
		"apply fails": {
			client: func(t *testing.T) client.Client {
				return interceptor.NewClient(withWatch(t), interceptor.Funcs{Apply: func(ctx context.Context, c client.WithWatch, obj runtimeApplyConfiguration, opts ...client.ApplyOption) error {
					return forbidden
				}})
			},
			owner: owner, key: key, desired: desiredHPA(3), is: apierrors.IsForbidden,
		},
		"get for delete fails": {
			client: func(t *testing.T) client.Client {
				return interceptor.NewClient(withWatch(t), interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					return forbidden
				}})
			},
			owner: owner, key: key, is: apierrors.IsForbidden,
		},
		"key mismatch": {
			client: func(t *testing.T) client.Client { return env.Client },
			owner:  owner, key: key,
			desired: func() *autoscalingv2.HorizontalPodAutoscaler { h := desiredHPA(3); h.Name = "other"; return h }(),
			is:      func(err error) bool { return errors.Is(err, deployment.ErrKeyMismatch) },
		},
		"key without name": {
			client: func(t *testing.T) client.Client { return env.Client },
			owner:  owner, key: client.ObjectKey{Namespace: ns}, desired: desiredHPA(3),
			is: func(err error) bool { return errors.Is(err, apply.ErrMissingName) },
		},
		"nil owner on delete": {
			client: func(t *testing.T) client.Client { return env.Client },
			owner:  nil, key: key,
			is: func(err error) bool { return errors.Is(err, apply.ErrNilOwner) },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cond, err := deployment.ReconcileHPA(ctx, tc.client(t), env.Scheme, tc.owner, tc.key, tc.desired)
			if err == nil || !tc.is(err) {
				t.Fatalf("err = %v, want a matching error", err)
			}
			if cond != (metav1.Condition{}) {
				t.Errorf("condition = %+v, want the zero Condition (HPAReady has no False reason: errors propagate)", cond)
			}
			if !strings.Contains(err.Error(), "HorizontalPodAutoscaler") {
				t.Errorf("error %q does not name the kind", err)
			}
		})
	}
}

// TestHPAFlow: the Outcome form of the HPA flow answers ReconcileHPA's conditions and
// never asks for a requeue; an error comes with the zero outcome.
func TestHPAFlow(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	key := client.ObjectKey{Namespace: ns, Name: "web"}
	mismatched := desiredHPA(3)
	mismatched.Name = "other"
	cases := map[string]struct {
		reason  string
		desired *autoscalingv2.HorizontalPodAutoscaler
		want    reconcile.Outcome
		err     error
	}{
		"1 wanted": {reason: "an applied HPA is HPAReady", desired: desiredHPA(4),
			want: reconcile.Done(reconcile.TrueCondition(deployment.ConditionHPAReady, deployment.ReasonHPAReady,
				"HorizontalPodAutoscaler "+key.String()+" scales Deployment web between 2 and 4 replicas"))},
		"2 key mismatch": {reason: "a refused HPA is an error with the zero outcome", desired: mismatched, err: deployment.ErrKeyMismatch},
		"3 not wanted": {reason: "the owner's HPA is deleted: HPANotRequired",
			want: reconcile.Done(reconcile.TrueCondition(deployment.ConditionHPAReady, deployment.ReasonHPANotRequired,
				"no HorizontalPodAutoscaler is requested"))},
	}
	for _, name := range []string{"1 wanted", "2 key mismatch", "3 not wanted"} {
		tc := cases[name]
		t.Run(name, func(t *testing.T) {
			out, err := deployment.HPAFlow(ctx, env.Client, env.Scheme, owner, key, tc.desired)
			if !errors.Is(err, tc.err) {
				t.Fatalf("%s: err = %v, want %v", tc.reason, err, tc.err)
			}
			if diff := cmp.Diff(tc.want, out); diff != "" {
				t.Errorf("%s: outcome (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
	if err := env.Client.Get(ctx, key, &autoscalingv2.HorizontalPodAutoscaler{}); !apierrors.IsNotFound(err) {
		t.Errorf("HPA after opt-out: %v, want NotFound", err)
	}
}
