package httproute_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/httproute"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// SpecFlow runs the flow from a CR's gateway block: a block applies the route it
// builds, labelled, to the backend (HTTPRouteNotAccepted until the Gateway accepts it,
// then HTTPRouteAccepted); no block deletes the route the owner controls
// (HTTPRouteNotRequired).
func TestSpecFlow(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, env, ns)
	key := routeKey(ns)
	spec := gatewaySpec()
	backend := httproute.Backend{ServiceName: "dashboard", Port: 8080}
	labels := map[string]string{"app.kubernetes.io/instance": "dashboard"}

	cond, res, err := specFlow(ctx, env.Client, env.Scheme, owner, key, &spec, backend, labels)
	checkOutcome(t, "applied", cond, res, err, wantCond(metav1.ConditionFalse, httproute.ReasonNotAccepted),
		ctrl.Result{RequeueAfter: httproute.AcceptancePollInterval}, "")
	route := &gatewayv1.HTTPRoute{}
	if err := env.Client.Get(ctx, key, route); err != nil {
		t.Fatal(err)
	}
	parents, rules := route.Spec.ParentRefs, route.Spec.Rules
	if route.Labels["app.kubernetes.io/instance"] != "dashboard" || len(parents) != 1 || parents[0].Name != "public" ||
		len(rules) != 1 || len(rules[0].BackendRefs) != 1 || rules[0].BackendRefs[0].Name != "dashboard" ||
		*rules[0].BackendRefs[0].Port != 8080 || *rules[0].Matches[0].Path.Value != httproute.DefaultPath ||
		fmt.Sprint(route.Spec.Hostnames) != "[dashboard.example.org]" {
		t.Errorf("stored route: labels %v, spec %+v; want the labels and the route of the block to dashboard:8080",
			route.Labels, route.Spec)
	}
	if _, err := simulate.SetHTTPRouteAccepted(ctx, env.Client, key, metav1.ConditionTrue, "Accepted", "accepted", 0); err != nil {
		t.Fatal(err)
	}
	cond, res, err = specFlow(ctx, env.Client, env.Scheme, owner, key, &spec, backend, labels)
	checkOutcome(t, "accepted", cond, res, err, wantCond(metav1.ConditionTrue, httproute.ReasonAccepted), ctrl.Result{}, "")

	cond, res, err = specFlow(ctx, env.Client, env.Scheme, owner, key, nil, backend, labels)
	checkOutcome(t, "removed", cond, res, err, wantCond(metav1.ConditionTrue, httproute.ReasonNotRequired), ctrl.Result{}, "")
	if err := env.Client.Get(ctx, key, &gatewayv1.HTTPRoute{}); !apierrors.IsNotFound(err) {
		t.Errorf("the route is still there after its block was removed: %v", err)
	}
}

// A block Build refuses sends no request and leaves the condition alone (no Type);
// with no block, a route someone else made is left in place, and a nil owner is
// refused.
func TestSpecFlowRefuses(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, env, ns)
	key := routeKey(ns)
	bad := httproute.Spec{ParentRef: httproute.ParentRef{Name: "public"}, Path: "no-slash"}
	counter := &testenv.RequestCounter{}
	c := counted(t, counter)
	cond, _, err := specFlow(ctx, c, env.Scheme, owner, key, &bad, httproute.Backend{ServiceName: "dashboard", Port: 8080}, nil)
	if !errors.Is(err, httproute.ErrInvalidSpec) || cond.Type != "" || counter.Total() != 0 {
		t.Fatalf("SpecFlow(bad path) = %+v, %v after %d requests; want no condition, ErrInvalidSpec, no request",
			cond, err, counter.Total())
	}

	foreign := desiredRoute(t, ns)
	if err := env.Client.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	cond, res, err := specFlow(ctx, env.Client, env.Scheme, owner, key, nil, httproute.Backend{}, nil)
	checkOutcome(t, "foreign", cond, res, err, wantCond(metav1.ConditionTrue, httproute.ReasonNotRequired), ctrl.Result{},
		"is not controlled by dashboard and was left in place")
	if err := env.Client.Get(ctx, key, &gatewayv1.HTTPRoute{}); err != nil {
		t.Errorf("the foreign route was deleted: %v", err)
	}
	spec := gatewaySpec()
	if _, _, err := specFlow(ctx, env.Client, env.Scheme, nil, key, &spec,
		httproute.Backend{ServiceName: "dashboard", Port: 8080}, nil); !errors.Is(err, apply.ErrNilOwner) {
		t.Errorf("SpecFlow with a nil owner = %v, want apply.ErrNilOwner", err)
	}
}

// counted is a client of env whose requests counter counts.
func counted(t *testing.T, counter *testenv.RequestCounter) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(counter.Wrap)
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// specFlow runs httproute.SpecFlow and splits its outcome for the checks of this package.
func specFlow(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object, key client.ObjectKey,
	spec *httproute.Spec, backend httproute.Backend, labels map[string]string) (metav1.Condition, ctrl.Result, error) {
	out, err := httproute.SpecFlow(ctx, c, scheme, owner, key, spec, backend, labels)
	return out.Condition, out.Result, err
}

// TestReconcileSpecIsSpecFlow: the deprecated ReconcileSpec answers SpecFlow's outcome,
// split into a condition and a result; a refused block is an error with zero values.
func TestReconcileSpecIsSpecFlow(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, env, ns)
	key := routeKey(ns)
	backend := httproute.Backend{ServiceName: "dashboard", Port: 8080}
	spec := gatewaySpec()
	cond, res, err := httproute.ReconcileSpec(ctx, env.Client, env.Scheme, owner, key, &spec, backend, nil) //nolint:staticcheck // the deprecated wrapper under test
	checkOutcome(t, "applied", cond, res, err, wantCond(metav1.ConditionFalse, httproute.ReasonNotAccepted),
		ctrl.Result{RequeueAfter: httproute.AcceptancePollInterval}, "waiting for Gateway")
	bad := httproute.Spec{ParentRef: httproute.ParentRef{Name: "public"}, Path: "no-slash"}
	cond, res, err = httproute.ReconcileSpec(ctx, env.Client, env.Scheme, owner, key, &bad, backend, nil) //nolint:staticcheck // the deprecated wrapper under test
	if !errors.Is(err, httproute.ErrInvalidSpec) || cond != (metav1.Condition{}) || !res.IsZero() {
		t.Errorf("bad block: (%+v, %+v, %v), want zero values and ErrInvalidSpec", cond, res, err)
	}
	cond, res, err = httproute.ReconcileSpec(ctx, env.Client, env.Scheme, owner, key, nil, backend, nil) //nolint:staticcheck // the deprecated wrapper under test
	checkOutcome(t, "removed", cond, res, err, wantCond(metav1.ConditionTrue, httproute.ReasonNotRequired), ctrl.Result{},
		"no gateway configured")
}
