package multicluster_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// namespaceResolver is fakeResolver that records the namespace each Resolve saw.
type namespaceResolver struct {
	fakeResolver
	seen *[]string
}

func (r namespaceResolver) Resolve(ctx context.Context, ref *commonv1.TargetClusterRefSpec) (*multicluster.Target, error) {
	ns, _ := multicluster.NamespaceFrom(ctx)
	*r.seen = append(*r.seen, ns)
	return r.fakeResolver.Resolve(ctx, ref)
}

func TestTargetGate(t *testing.T) {
	local := &multicluster.Target{}
	edge := &multicluster.Target{Name: "edge"}
	unavailable := &multicluster.UnavailableError{Cluster: "edge", Reason: "does not answer", Err: errors.New("connection refused")}
	type want struct {
		gated multicluster.Gated
		err   string
	}
	cases := map[string]struct {
		reason   string
		resolver fakeResolver
		ref      *commonv1.TargetClusterRefSpec
		want     want
	}{
		"Local": {
			reason:   "A nil ref is the management cluster: the gate passes and leaves the condition to the step.",
			resolver: fakeResolver{local: local},
			want:     want{gated: multicluster.Gated{Target: local}},
		},
		"Remote": {
			reason:   "A resolved ref passes with its target and no requeue.",
			resolver: fakeResolver{target: edge},
			ref:      &commonv1.TargetClusterRefSpec{Name: "edge"},
			want:     want{gated: multicluster.Gated{Target: edge}},
		},
		"Unavailable": {
			reason:   "An unavailable cluster is False TargetClusterUnavailable with the resolver's error, and a requeue.",
			resolver: fakeResolver{err: unavailable},
			ref:      &commonv1.TargetClusterRefSpec{Name: "edge"},
			want: want{gated: multicluster.Gated{Outcome: reconcile.Requeue(reconcile.FalseCondition("SecretsReady",
				multicluster.TargetClusterUnavailable, `target cluster "edge" does not answer: connection refused`),
				multicluster.RetryInterval)}},
		},
		"OtherError": {
			reason:   "Any other resolver error is returned with a zero outcome.",
			resolver: fakeResolver{err: context.Canceled},
			ref:      &commonv1.TargetClusterRefSpec{Name: "edge"},
			want:     want{err: "resolve target cluster: context canceled"},
		},
		"NoTargetNoError": {
			reason: "A resolver that answers nothing is an error, not a nil target that passes.",
			ref:    &commonv1.TargetClusterRefSpec{Name: "edge"},
			want:   want{err: "returned no target and no error"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var seen []string
			g := &Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "team-a", Generation: 7}}
			got, err := multicluster.TargetGate(context.Background(), namespaceResolver{tc.resolver, &seen}, g, "SecretsReady", tc.ref)
			if diff := cmp.Diff(tc.want.gated, got); diff != "" {
				t.Errorf("%s\nTargetGate (-want +got):\n%s", tc.reason, diff)
			}
			if (err == nil) != (tc.want.err == "") || (err != nil && !strings.Contains(err.Error(), tc.want.err)) {
				t.Errorf("%s\nerr = %v, want %q", tc.reason, err, tc.want.err)
			}
			if diff := cmp.Diff([]string{"team-a"}, seen); diff != "" {
				t.Errorf("%s\nthe resolver did not resolve for the object's namespace (-want +got):\n%s", tc.reason, diff)
			}

			// Settle hands the outcome over: the condition lands with observedGeneration,
			// and the step returns the requeue or the error alone.
			res, serr := reconcile.Settle(g, got.Outcome, err)
			if !errors.Is(serr, err) || (serr == nil) != (err == nil) {
				t.Errorf("%s\nSettle err = %v, want %v", tc.reason, serr, err)
			}
			if diff := cmp.Diff(tc.want.gated.Result, res); diff != "" {
				t.Errorf("%s\nSettle result (-want +got):\n%s", tc.reason, diff)
			}
			var want []metav1.Condition
			if c := tc.want.gated.Condition; c.Type != "" {
				c.ObservedGeneration = 7
				want = []metav1.Condition{c}
			}
			if diff := cmp.Diff(want, g.Status.Conditions, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime"),
				cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nconditions after Settle (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func TestTargetGateRefusesBadInput(t *testing.T) {
	g := &Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "ns"}}
	cases := map[string]struct {
		reason        string
		resolver      multicluster.Resolver
		obj           client.Object
		conditionType string
	}{
		"NilResolver":        {reason: "There is nothing to resolve with.", obj: g, conditionType: "Ready"},
		"NilObject":          {reason: "The namespace comes from the object.", resolver: fakeResolver{}, conditionType: "Ready"},
		"TypedNilObject":     {reason: "A typed nil is no object either.", resolver: fakeResolver{}, obj: (*Gadget)(nil), conditionType: "Ready"},
		"EmptyConditionType": {reason: "An unavailable cluster needs a condition to report on.", resolver: fakeResolver{}, obj: g},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := multicluster.TargetGate(context.Background(), tc.resolver, tc.obj, tc.conditionType, nil)
			if !errors.Is(err, multicluster.ErrInvalidOptions) {
				t.Errorf("%s\nerr = %v, want ErrInvalidOptions", tc.reason, err)
			}
			if diff := cmp.Diff(multicluster.Gated{}, got); diff != "" {
				t.Errorf("%s\nan outcome with the error (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRetryInterval: the interval lives in multicluster; the deprecated reconcile alias
// keeps its value.
func TestRetryInterval(t *testing.T) {
	if multicluster.RetryInterval != 15*time.Second || reconcile.TargetClusterRetryInterval != multicluster.RetryInterval { //nolint:staticcheck // the deprecated alias must keep its value
		t.Errorf("RetryInterval = %s, reconcile.TargetClusterRetryInterval = %s; want both 15s",
			multicluster.RetryInterval, reconcile.TargetClusterRetryInterval) //nolint:staticcheck // the deprecated alias must keep its value
	}
	if got := (&multicluster.Target{Name: "edge"}).Recheck(); got != (ctrl.Result{RequeueAfter: multicluster.RetryInterval}) {
		t.Errorf("Recheck on a target cluster = %+v, want a requeue after RetryInterval", got)
	}
}

// TestTargetGateResolvesForTheObjectsNamespace runs the gate against a real
// ClusterResolver on envtest, with no namespace in the context: a target cluster whose
// kubeconfig Secret lists the object's namespace resolves, and one in a namespace it
// does not list is TargetClusterUnavailable naming that namespace.
func TestTargetGateResolvesForTheObjectsNamespace(t *testing.T) {
	ns, other := env.Namespace(t), env.Namespace(t)
	namespaceOn(t, target, ns)
	op := startOperator(t, ns, operatorOptions{noRecheck: true})
	op.register(t, target, "edge")
	ref := &commonv1.TargetClusterRefSpec{Name: "edge"}

	allowed := &Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: ns}}
	got, err := multicluster.TargetGate(context.Background(), op.resolver, allowed, "Ready", ref)
	if err != nil || got.Target == nil || got.Target.Name != "edge" || !got.Continue() || got.Condition.Type != "" {
		t.Fatalf("TargetGate for namespace %s = %+v, %v; want target edge, a zero outcome", ns, got, err)
	}

	refused := &Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: other}}
	got, err = multicluster.TargetGate(context.Background(), op.resolver, refused, "Ready", ref)
	if err != nil || got.Target != nil || got.Result.RequeueAfter != multicluster.RetryInterval ||
		got.Condition.Reason != multicluster.TargetClusterUnavailable || !strings.Contains(got.Condition.Message, `"`+other+`"`) {
		t.Fatalf("TargetGate for namespace %s = %+v, %v; want TargetClusterUnavailable naming the namespace and a requeue", other, got, err)
	}
}
