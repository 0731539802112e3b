package netpol_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/netpol"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// existingPolicy is a NetworkPolicy of the flow's key that is there before it runs.
type existingPolicy struct {
	// other makes another object the policy's controller; owned makes the owner its
	// controller; neither leaves it without one.
	other, owned bool
	deleting     bool
}

func existingPolicies() map[string]existingPolicy {
	return map[string]existingPolicy{
		"unowned":                     {},
		"controlled by another owner": {other: true},
		"owner's, being deleted":      {owned: true, deleting: true},
		"another's, being deleted":    {other: true, deleting: true},
	}
}

// createPolicy creates the existing policy as tc describes and returns the stored copy.
func createPolicy(t *testing.T, tc existingPolicy, ns string, owner client.Object) *networkingv1.NetworkPolicy {
	t.Helper()
	ctx := context.Background()
	p := desiredPolicy(ns, "someone-elses")
	var controller client.Object
	switch {
	case tc.other:
		controller = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "helm-release", Namespace: ns}}
		if err := env.Client.Create(ctx, controller); err != nil {
			t.Fatal(err)
		}
	case tc.owned:
		controller = owner
	}
	if controller != nil {
		if err := controllerutil.SetControllerReference(controller, p, env.Scheme); err != nil {
			t.Fatal(err)
		}
	}
	if tc.deleting {
		env.CreateBeingDeleted(t, p)
		return p
	}
	if err := env.Client.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	stored := &networkingv1.NetworkPolicy{}
	if err := env.Client.Get(ctx, policyKey(ns), stored); err != nil {
		t.Fatal(err)
	}
	return stored
}

// policyUntouched fails the test when the policy was written since before was read.
func policyUntouched(t *testing.T, before *networkingv1.NetworkPolicy) {
	t.Helper()
	now := &networkingv1.NetworkPolicy{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(before), now); err != nil {
		t.Fatalf("the existing NetworkPolicy: %v, want it untouched", err)
	}
	if now.ResourceVersion != before.ResourceVersion || now.UID != before.UID {
		t.Errorf("the existing NetworkPolicy was written: resourceVersion %s -> %s", before.ResourceVersion, now.ResourceVersion)
	}
	if diff := cmp.Diff(before.OwnerReferences, now.OwnerReferences); diff != "" {
		t.Errorf("owner references changed (-before +after):\n%s", diff)
	}
}

// TestFlowNeverTakesOver: wanting a policy whose name is taken by a NetworkPolicy
// the owner does not control, or by one being deleted, is refused with an error and
// the existing policy (its ingress rules included) is left exactly as it was; not
// wanting one deletes nothing that is not the owner's and nothing already on its way out.
func TestFlowNeverTakesOver(t *testing.T) {
	for name, tc := range existingPolicies() {
		t.Run(name+"/policy wanted", func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			before := createPolicy(t, tc, ns, owner)
			cond, err := flowCond(t, ctx, env.Client, env.Scheme, owner, policyKey(ns), desiredPolicy(ns, "gateways"))
			var want error
			var text string
			switch {
			case tc.deleting:
				want, text = apply.ErrBeingDeleted, "being deleted"
			case tc.other:
				want, text = apply.ErrNotControlled, "is controlled by ConfigMap helm-release"
			default:
				want, text = apply.ErrNotControlled, "has no controller"
			}
			if !errors.Is(err, want) || !strings.Contains(err.Error(), text) || !strings.Contains(err.Error(), "NetworkPolicy "+ns+"/dashboard") {
				t.Fatalf("err = %v, want %v naming the NetworkPolicy and containing %q", err, want, text)
			}
			if cond != (metav1.Condition{}) {
				t.Errorf("condition %+v with an error, want the zero value", cond)
			}
			policyUntouched(t, before)
		})
		t.Run(name+"/no policy wanted", func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			before := createPolicy(t, tc, ns, owner)
			cond, err := flowCond(t, ctx, env.Client, env.Scheme, owner, policyKey(ns), nil)
			if err != nil || cond.Reason != netpol.ReasonNotRequired {
				t.Fatalf("pass = (%+v, %v), want NotRequired", cond, err)
			}
			if !tc.owned && !strings.Contains(cond.Message, "is not controlled by dashboard and was left in place") {
				t.Errorf("message %q does not say the policy was left in place", cond.Message)
			}
			policyUntouched(t, before)
		})
	}
}

// TestFlowFaultMatrix runs the flow with every API call failing once, for a
// policy that is wanted (applied) and for one that is no longer wanted (deleted): a
// policy that is not the owner's is never touched, the owner's is never re-created,
// and every run converges to the policy of the run that never failed. A read never
// answers 409 and a timed-out read has no effect, so reads meet 500 and a cancelled
// context only.
func TestFlowFaultMatrix(t *testing.T) {
	for name, wanted := range map[string]bool{"policy wanted": true, "policy no longer wanted": false} {
		t.Run(name, func(t *testing.T) {
			setup := func(t *testing.T) faults.Scenario {
				ctx := context.Background()
				ns := env.Namespace(t)
				owner := newOwner(t, ns)
				key := policyKey(ns)
				foreign := desiredPolicy(ns, "someone-elses")
				foreign.Name = "helm-policy"
				if err := env.Client.Create(ctx, foreign); err != nil {
					t.Fatal(err)
				}
				if !wanted {
					if _, err := flowCond(t, ctx, env.Client, env.Scheme, owner, key, desiredPolicy(ns, "gateways")); err != nil {
						t.Fatal(err)
					}
				}
				var uid string
				var last metav1.Condition
				return faults.Scenario{
					Client: env.Client,
					Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
						var desired *networkingv1.NetworkPolicy
						if wanted {
							desired = desiredPolicy(ns, "gateways")
						}
						cond, err := flowCond(t, ctx, c, env.Scheme, owner, key, desired)
						if cond.Type != "" {
							last = cond
						}
						return ctrl.Result{}, err
					},
					Check: func(t *testing.T) {
						now := &networkingv1.NetworkPolicy{}
						if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(foreign), now); err != nil ||
							now.ResourceVersion != foreign.ResourceVersion {
							t.Errorf("the policy that is not the owner's was touched (err %v)", err)
						}
						switch err := env.Client.Get(context.Background(), key, now); {
						case apierrors.IsNotFound(err):
							if wanted && uid != "" {
								t.Error("the owner's policy was deleted")
							}
						case err != nil:
							t.Fatal(err)
						case uid == "":
							uid = string(now.UID)
						case uid != string(now.UID):
							t.Error("the owner's policy was re-created")
						}
					},
					State: func(t *testing.T) any {
						now := &networkingv1.NetworkPolicy{}
						err := env.Client.Get(context.Background(), key, now)
						if err != nil && !apierrors.IsNotFound(err) {
							t.Fatal(err)
						}
						cond := last
						cond.Message = strings.ReplaceAll(cond.Message, ns, "NS")
						return struct {
							Condition metav1.Condition
							Exists    bool
							Spec      networkingv1.NetworkPolicySpec
						}{cond, err == nil, now.Spec}
					},
				}
			}
			faults.Matrix{Setup: setup}.RunWritesAndReads(t)
		})
	}
}

// TestFlowNilScheme: a nil scheme is an error wrapping apply.ErrNilScheme that
// names the policy, before any API call, whether a policy is wanted or not; never a
// panic.
func TestFlowNilScheme(t *testing.T) {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dashboard", Namespace: "ns", UID: "uid-1"}}
	for name, desired := range map[string]*networkingv1.NetworkPolicy{"policy wanted": desiredPolicy("ns", "gateways"), "no policy wanted": nil} {
		t.Run(name, func(t *testing.T) {
			calls := 0
			c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(env.Scheme).Build(), interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, o client.Object, opts ...client.GetOption) error {
					calls++
					return c.Get(ctx, k, o, opts...)
				},
			})
			cond, err := flowCond(t, context.Background(), c, nil, owner, policyKey("ns"), desired)
			if !errors.Is(err, apply.ErrNilScheme) || !strings.Contains(err.Error(), "NetworkPolicy ns/dashboard") {
				t.Errorf("err = %v, want apply.ErrNilScheme naming NetworkPolicy ns/dashboard", err)
			}
			if cond != (metav1.Condition{}) || calls != 0 {
				t.Errorf("condition %+v, %d API calls; want the zero value and no call", cond, calls)
			}
		})
	}
}
