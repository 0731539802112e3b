package httproute_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/httproute"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// existingRoute is an HTTPRoute of the flow's key that is there before the flow runs.
type existingRoute struct {
	prepare  func(t *testing.T, ns string, owner, route client.Object)
	deleting bool
}

func existingRoutes() map[string]existingRoute {
	return map[string]existingRoute{
		"unowned": {prepare: func(*testing.T, string, client.Object, client.Object) {}},
		"controlled by another owner": {prepare: func(t *testing.T, ns string, _, route client.Object) {
			other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "helm-release", Namespace: ns}}
			if err := env.Client.Create(context.Background(), other); err != nil {
				t.Fatal(err)
			}
			if err := controllerutil.SetControllerReference(other, route, env.Scheme); err != nil {
				t.Fatal(err)
			}
		}},
		"owner's, being deleted": {deleting: true, prepare: func(t *testing.T, _ string, owner, route client.Object) {
			if err := controllerutil.SetControllerReference(owner, route, env.Scheme); err != nil {
				t.Fatal(err)
			}
		}},
		"another's, being deleted": {deleting: true, prepare: func(t *testing.T, ns string, _, route client.Object) {
			other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "helm-release", Namespace: ns}}
			if err := env.Client.Create(context.Background(), other); err != nil {
				t.Fatal(err)
			}
			if err := controllerutil.SetControllerReference(other, route, env.Scheme); err != nil {
				t.Fatal(err)
			}
		}},
	}
}

// createRoute creates the existing route as tc describes and returns the stored copy.
func createRoute(t *testing.T, tc existingRoute, ns string, owner client.Object) *gatewayv1.HTTPRoute {
	t.Helper()
	ctx := context.Background()
	route := desiredRoute(t, ns, "someone-elses.example.org")
	tc.prepare(t, ns, owner, route)
	if tc.deleting {
		env.CreateBeingDeleted(t, route)
		return route
	}
	if err := env.Client.Create(ctx, route); err != nil {
		t.Fatal(err)
	}
	stored := &gatewayv1.HTTPRoute{}
	if err := env.Client.Get(ctx, routeKey(ns), stored); err != nil {
		t.Fatal(err)
	}
	return stored
}

// routeUntouched fails the test when the route was written since before was read.
func routeUntouched(t *testing.T, before *gatewayv1.HTTPRoute) {
	t.Helper()
	now := &gatewayv1.HTTPRoute{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(before), now); err != nil {
		t.Fatalf("the existing HTTPRoute: %v, want it untouched", err)
	}
	if now.ResourceVersion != before.ResourceVersion || now.UID != before.UID {
		t.Errorf("the existing HTTPRoute was written: resourceVersion %s -> %s", before.ResourceVersion, now.ResourceVersion)
	}
	if diff := cmp.Diff(before.OwnerReferences, now.OwnerReferences); diff != "" {
		t.Errorf("owner references changed (-before +after):\n%s", diff)
	}
}

// TestFlowNeverTakesOver: wanting a route whose name is taken by an HTTPRoute the
// owner does not control, or by one being deleted, is refused with an error and the
// existing route is left exactly as it was; not wanting one deletes nothing that is
// not the owner's and nothing already on its way out.
func TestFlowNeverTakesOver(t *testing.T) {
	for name, tc := range existingRoutes() {
		t.Run(name+"/route wanted", func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, env, ns)
			before := createRoute(t, tc, ns, owner)
			cond, res, err := flow(ctx, env.Client, env.Scheme, owner, routeKey(ns), desiredRoute(t, ns))
			want, text := apply.ErrNotControlled, "is controlled by ConfigMap helm-release"
			switch {
			case tc.deleting:
				want, text = apply.ErrBeingDeleted, "being deleted"
			case name == "unowned":
				text = "has no controller"
			}
			if !errors.Is(err, want) || !strings.Contains(err.Error(), text) || !strings.Contains(err.Error(), "HTTPRoute "+ns+"/dashboard") {
				t.Fatalf("err = %v, want %v naming the HTTPRoute and containing %q", err, want, text)
			}
			if cond != (metav1.Condition{}) || !res.IsZero() {
				t.Errorf("condition %+v / result %+v with an error, want zero values", cond, res)
			}
			routeUntouched(t, before)
		})
		t.Run(name+"/no route wanted", func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, env, ns)
			before := createRoute(t, tc, ns, owner)
			cond, res, err := flow(ctx, env.Client, env.Scheme, owner, routeKey(ns), nil)
			if err != nil || cond.Reason != httproute.ReasonNotRequired || !res.IsZero() {
				t.Fatalf("pass = (%+v, %+v, %v), want NotRequired", cond, res, err)
			}
			if foreign := name != "owner's, being deleted"; foreign &&
				!strings.Contains(cond.Message, "is not controlled by dashboard and was left in place") {
				t.Errorf("message %q does not say the route was left in place", cond.Message)
			}
			routeUntouched(t, before)
		})
	}
}

// TestFlowFaultMatrix runs the flow with every API call failing once, for a route
// that is wanted (applied, then accepted by the simulated Gateway) and for one that is
// no longer wanted (deleted): a route that is not the owner's is never touched, the
// owner's route is never re-created, and every run converges to the route of the run
// that never failed. A read never answers 409 and a timed-out read has no effect, so
// reads meet 500 and a cancelled context only.
func TestFlowFaultMatrix(t *testing.T) {
	scenarios := map[string]bool{"route wanted": true, "route no longer wanted": false}
	for name, wanted := range scenarios {
		t.Run(name, func(t *testing.T) {
			setup := func(t *testing.T) faults.Scenario {
				ctx := context.Background()
				ns := env.Namespace(t)
				owner := newOwner(t, env, ns)
				key := routeKey(ns)
				// A route of someone else's next to the owner's: never touched.
				foreign := desiredRoute(t, ns)
				foreign.Name = "helm-route"
				if err := env.Client.Create(ctx, foreign); err != nil {
					t.Fatal(err)
				}
				if !wanted {
					if _, _, err := flow(ctx, env.Client, env.Scheme, owner, key, desiredRoute(t, ns)); err != nil {
						t.Fatal(err)
					}
				}
				var uid string
				var last metav1.Condition
				return faults.Scenario{
					Client: env.Client,
					Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
						var desired *gatewayv1.HTTPRoute
						if wanted {
							desired = desiredRoute(t, ns)
						}
						cond, res, err := flow(ctx, c, env.Scheme, owner, key, desired)
						if cond.Type != "" {
							last = cond
						}
						if err == nil && cond.Reason == httproute.ReasonNotAccepted {
							if err := setAccepted(context.Background(), env.Client, key, metav1.ConditionTrue, "Accepted", "Route is accepted"); err != nil {
								return ctrl.Result{}, err
							}
						}
						return res, err
					},
					Check: func(t *testing.T) {
						now := &gatewayv1.HTTPRoute{}
						if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(foreign), now); err != nil ||
							now.ResourceVersion != foreign.ResourceVersion {
							t.Errorf("the route that is not the owner's was touched (err %v)", err)
						}
						switch err := env.Client.Get(context.Background(), key, now); {
						case apierrors.IsNotFound(err):
							if wanted && uid != "" {
								t.Error("the owner's route was deleted")
							}
						case err != nil:
							t.Fatal(err)
						case uid == "":
							uid = string(now.UID)
						case uid != string(now.UID):
							t.Error("the owner's route was re-created")
						}
					},
					State: func(t *testing.T) any {
						now := &gatewayv1.HTTPRoute{}
						err := env.Client.Get(context.Background(), key, now)
						if err != nil && !apierrors.IsNotFound(err) {
							t.Fatal(err)
						}
						cond := last
						cond.Message = strings.ReplaceAll(cond.Message, ns, "NS")
						return struct {
							Condition metav1.Condition
							Exists    bool
							Spec      gatewayv1.HTTPRouteSpec
						}{cond, err == nil, now.Spec}
					},
				}
			}
			faults.Matrix{Setup: setup}.RunWritesAndReads(t)
		})
	}
}

// TestFlowNilScheme: a nil scheme is an error wrapping apply.ErrNilScheme that
// names the route, before any API call, whether a route is wanted or not; never a panic.
func TestFlowNilScheme(t *testing.T) {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dashboard", Namespace: "ns", UID: "uid-1"}}
	for name, desired := range map[string]*gatewayv1.HTTPRoute{"route wanted": desiredRoute(t, "ns"), "no route wanted": nil} {
		t.Run(name, func(t *testing.T) {
			calls := 0
			c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(env.Scheme).Build(), interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, o client.Object, opts ...client.GetOption) error {
					calls++
					return c.Get(ctx, k, o, opts...)
				},
			})
			cond, res, err := flow(context.Background(), c, nil, owner, routeKey("ns"), desired)
			if !errors.Is(err, apply.ErrNilScheme) || !strings.Contains(err.Error(), "HTTPRoute ns/dashboard") {
				t.Errorf("err = %v, want apply.ErrNilScheme naming HTTPRoute ns/dashboard", err)
			}
			if cond != (metav1.Condition{}) || !res.IsZero() || calls != 0 {
				t.Errorf("condition %+v, result %+v, %d API calls; want zero values and no call", cond, res, calls)
			}
		})
	}
}
