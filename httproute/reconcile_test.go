package httproute_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/capability"
	"github.com/c5c3/reconciler-sdk/httproute"
	"github.com/c5c3/reconciler-sdk/testenv"
)

func newOwner(t testing.TB, e *testenv.Env, ns string) *corev1.ConfigMap {
	t.Helper()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dashboard", Namespace: ns}}
	if err := e.Client.Create(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	return owner
}

func routeKey(ns string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: "dashboard"} }

func gatewaySpec(hostnames ...string) httproute.Spec {
	if len(hostnames) == 0 {
		hostnames = []string{"dashboard.example.org"}
	}
	return httproute.Spec{
		ParentRef: httproute.ParentRef{Name: "public", Namespace: "gateways", SectionName: "https"},
		Hostnames: hostnames,
	}
}

func desiredRoute(t testing.TB, ns string, hostnames ...string) *gatewayv1.HTTPRoute {
	t.Helper()
	r, err := httproute.Build(routeKey(ns), gatewaySpec(hostnames...), httproute.Backend{ServiceName: "dashboard", Port: 8080})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// cond strips what the flow does not set, for comparison.
func wantCond(status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: httproute.ConditionType, Status: status, Reason: reason}
}

func checkOutcome(t *testing.T, step string, cond metav1.Condition, res ctrl.Result, err error,
	want metav1.Condition, wantRes ctrl.Result, msgHas string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", step, err)
	}
	got := cond
	got.Message = ""
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: condition (-want +got):\n%s", step, diff)
	}
	if res != wantRes {
		t.Errorf("%s: result = %+v, want %+v", step, res, wantRes)
	}
	if !strings.Contains(cond.Message, msgHas) {
		t.Errorf("%s: message %q does not contain %q", step, cond.Message, msgHas)
	}
}

func TestFlowLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, env, ns)
	key := routeKey(ns)
	requeue := ctrl.Result{RequeueAfter: 10 * time.Second}

	// Applied, no Gateway verdict yet.
	route := desiredRoute(t, ns)
	cond, res, err := flow(ctx, env.Client, env.Scheme, owner, key, route)
	checkOutcome(t, "created", cond, res, err, wantCond(metav1.ConditionFalse, httproute.ReasonNotAccepted), requeue,
		"waiting for Gateway gateways/public listener https to accept HTTPRoute "+ns+"/dashboard")
	if ref := metav1.GetControllerOf(route); ref == nil || ref.UID != owner.UID {
		t.Fatalf("controller reference = %+v, want owner %s", ref, owner.UID)
	}

	// The Gateway accepts it.
	if err := setAccepted(ctx, env.Client, key, metav1.ConditionTrue, "Accepted", "Route is accepted"); err != nil {
		t.Fatal(err)
	}
	accepted := desiredRoute(t, ns)
	cond, res, err = flow(ctx, env.Client, env.Scheme, owner, key, accepted)
	checkOutcome(t, "accepted", cond, res, err, wantCond(metav1.ConditionTrue, httproute.ReasonAccepted), ctrl.Result{},
		"accepted by Gateway gateways/public listener https")

	// A converged pass writes nothing.
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := flow(ctx, c, env.Scheme, owner, key, desiredRoute(t, ns)); err != nil {
		t.Fatal(err) // warms the mapper
	}
	counter.Reset()
	again := desiredRoute(t, ns)
	cond, _, err = flow(ctx, c, env.Scheme, owner, key, again)
	if err != nil || cond.Reason != httproute.ReasonAccepted {
		t.Fatalf("converged: %+v, %v", cond, err)
	}
	if again.ResourceVersion != accepted.ResourceVersion {
		t.Errorf("converged pass moved resourceVersion %s -> %s", accepted.ResourceVersion, again.ResourceVersion)
	}
	// The server-side apply request itself is a PATCH, but it must not change the object.
	if n := counter.Method("PATCH"); n != 1 || counter.Writes() != 1 {
		t.Errorf("converged pass sent %d PATCH / %d writes, want exactly the one no-op apply", n, counter.Writes())
	}

	// A spec change bumps the generation: the old verdict is stale.
	changed := desiredRoute(t, ns, "dashboard.example.org", "console.example.org")
	cond, res, err = flow(ctx, env.Client, env.Scheme, owner, key, changed)
	checkOutcome(t, "changed", cond, res, err, wantCond(metav1.ConditionFalse, httproute.ReasonNotAccepted), requeue,
		"generation 2")
	if diff := cmp.Diff([]gatewayv1.Hostname{"dashboard.example.org", "console.example.org"}, changed.Spec.Hostnames); diff != "" {
		t.Errorf("hostnames not applied (-want +got):\n%s", diff)
	}

	// The Gateway rejects the new spec: its reason and message are mirrored.
	if err := setAccepted(ctx, env.Client, key, metav1.ConditionFalse, "NotAllowedByListeners", "hostname not allowed"); err != nil {
		t.Fatal(err)
	}
	cond, res, err = flow(ctx, env.Client, env.Scheme, owner, key,
		desiredRoute(t, ns, "dashboard.example.org", "console.example.org"))
	checkOutcome(t, "rejected", cond, res, err, wantCond(metav1.ConditionFalse, httproute.ReasonNotAccepted), requeue,
		"did not accept HTTPRoute "+ns+"/dashboard: NotAllowedByListeners: hostname not allowed")

	// The gateway block is removed: the route goes.
	cond, res, err = flow(ctx, env.Client, env.Scheme, owner, key, nil)
	checkOutcome(t, "removed", cond, res, err, wantCond(metav1.ConditionTrue, httproute.ReasonNotRequired), ctrl.Result{},
		"not required")
	if err := env.Client.Get(ctx, key, &gatewayv1.HTTPRoute{}); !apierrors.IsNotFound(err) {
		t.Fatalf("route still there after removal: %v", err)
	}

	// Nothing to remove: no write.
	counter.Reset()
	cond, _, err = flow(ctx, c, env.Scheme, owner, key, nil)
	if err != nil || cond.Reason != httproute.ReasonNotRequired {
		t.Fatalf("removed again: %+v, %v", cond, err)
	}
	if counter.Writes() != 0 {
		t.Errorf("converged removal wrote %d times", counter.Writes())
	}
}

func TestFlowRestoresDrift(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, env, ns)
	key := routeKey(ns)
	if _, _, err := flow(ctx, env.Client, env.Scheme, owner, key, desiredRoute(t, ns)); err != nil {
		t.Fatal(err)
	}
	edited := &gatewayv1.HTTPRoute{}
	if err := env.Client.Get(ctx, key, edited); err != nil {
		t.Fatal(err)
	}
	edited.Spec.Hostnames = []gatewayv1.Hostname{"evil.example.org"}
	if err := env.Client.Update(ctx, edited, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	got := desiredRoute(t, ns)
	if _, _, err := flow(ctx, env.Client, env.Scheme, owner, key, got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]gatewayv1.Hostname{"dashboard.example.org"}, got.Spec.Hostnames); diff != "" {
		t.Errorf("drift not restored (-want +got):\n%s", diff)
	}
}

// TestFlowGatewayAPINotInstalled runs on a cluster without the Gateway API, then
// installs it: the same client (and RESTMapper) notices on the next pass.
func TestFlowGatewayAPINotInstalled(t *testing.T) {
	ctx := context.Background()
	ns := bare.Namespace(t)
	owner := newOwner(t, bare, ns)
	key := routeKey(ns)
	c, counter, err := bare.CountingClient()
	if err != nil {
		t.Fatal(err)
	}

	cond, res, err := flow(ctx, c, bare.Scheme, owner, key, desiredRoute(t, ns))
	checkOutcome(t, "wanted", cond, res, err, wantCond(metav1.ConditionFalse, httproute.ReasonGatewayAPINotInstalled),
		ctrl.Result{}, "install the Gateway API CRDs")
	if counter.Writes() != 0 {
		t.Errorf("wrote %d times on a cluster without the Gateway API", counter.Writes())
	}

	// Not wanted on a cluster without the Gateway API: nothing to do, and True.
	cond, res, err = flow(ctx, c, bare.Scheme, owner, key, nil)
	checkOutcome(t, "not wanted", cond, res, err, wantCond(metav1.ConditionTrue, httproute.ReasonNotRequired),
		ctrl.Result{}, "not required")
	if counter.Writes() != 0 {
		t.Errorf("wrote %d times on a cluster without the Gateway API", counter.Writes())
	}

	// The Gateway API is installed later: the next pass applies the route.
	bare.InstallCRDs(t, testenv.CRDSource{Module: testenv.GatewayAPIModule, Version: testenv.GatewayAPIVersion,
		Files: []string{"config/crd/standard/gateway.networking.k8s.io_httproutes.yaml"}})
	route := desiredRoute(t, ns)
	cond, res, err = flow(ctx, c, bare.Scheme, owner, key, route)
	checkOutcome(t, "installed", cond, res, err, wantCond(metav1.ConditionFalse, httproute.ReasonNotAccepted),
		ctrl.Result{RequeueAfter: httproute.AcceptancePollInterval}, "waiting for Gateway")
	if route.UID == "" {
		t.Error("route not created after the Gateway API was installed")
	}
}

// brokenMapper fails every mapping as an unreachable discovery endpoint would.
type brokenMapper struct{ meta.RESTMapper }

func (brokenMapper) RESTMapping(schema.GroupKind, ...string) (*meta.RESTMapping, error) {
	return nil, errors.New("failed to get server groups: dial tcp 127.0.0.1:1: connect: connection refused")
}

func TestFlowCapabilityProbeFailed(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, env, ns)
	key := routeKey(ns)
	c, err := client.New(env.Config, client.Options{Scheme: env.Scheme, Mapper: brokenMapper{}})
	if err != nil {
		t.Fatal(err)
	}
	cond, res, err := flow(ctx, c, env.Scheme, owner, key, desiredRoute(t, ns))
	if !errors.Is(err, capability.ErrProbeFailed) {
		t.Fatalf("err = %v, want capability.ErrProbeFailed", err)
	}
	if !strings.Contains(err.Error(), "HTTPRoute "+ns+"/dashboard") {
		t.Errorf("error %q does not name the route", err)
	}
	if res != (ctrl.Result{}) {
		t.Errorf("result %+v returned together with an error", res)
	}
	got := cond
	got.Message = ""
	if diff := cmp.Diff(wantCond(metav1.ConditionFalse, httproute.ReasonCapabilityProbeFailed), got); diff != "" {
		t.Errorf("condition (-want +got):\n%s", diff)
	}
	if err := env.Client.Get(ctx, key, &gatewayv1.HTTPRoute{}); !apierrors.IsNotFound(err) {
		t.Errorf("route written although the probe failed: %v", err)
	}
}

func TestFlowLeavesForeignRoute(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, env, ns)
	key := routeKey(ns)
	foreign := desiredRoute(t, ns) // created by someone else: no owner reference
	if err := env.Client.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	cond, res, err := flow(ctx, env.Client, env.Scheme, owner, key, nil)
	checkOutcome(t, "foreign", cond, res, err, wantCond(metav1.ConditionTrue, httproute.ReasonNotRequired), ctrl.Result{},
		"HTTPRoute "+ns+"/dashboard is not controlled by dashboard and was left in place")
	if err := env.Client.Get(ctx, key, &gatewayv1.HTTPRoute{}); err != nil {
		t.Errorf("foreign route was deleted: %v", err)
	}
}

func TestFlowErrorsPropagate(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, env, ns)
	key := routeKey(ns)
	if _, _, err := flow(ctx, env.Client, env.Scheme, owner, key, desiredRoute(t, ns)); err != nil {
		t.Fatal(err)
	}
	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: gatewayv1.GroupName, Resource: "httproutes"}, "dashboard", errors.New("denied"))
	failing := interceptor.NewClient(base, interceptor.Funcs{
		Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
			return forbidden
		},
		Delete: func(context.Context, client.WithWatch, client.Object, ...client.DeleteOption) error { return forbidden },
	})

	cases := map[string]*gatewayv1.HTTPRoute{"apply": desiredRoute(t, ns), "delete": nil}
	for name, desired := range cases {
		t.Run(name, func(t *testing.T) {
			cond, res, err := flow(ctx, failing, env.Scheme, owner, key, desired)
			if !apierrors.IsForbidden(err) {
				t.Fatalf("err = %v, want Forbidden", err)
			}
			if !strings.Contains(err.Error(), "HTTPRoute "+ns+"/dashboard") {
				t.Errorf("error %q does not name the route", err)
			}
			if cond != (metav1.Condition{}) || res != (ctrl.Result{}) {
				t.Errorf("condition %+v / result %+v returned with an error, want zero values", cond, res)
			}
		})
	}
}

func TestFlowKeyMismatch(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, env, ns)
	desired := desiredRoute(t, ns)
	desired.Name = "other"
	_, _, err := flow(context.Background(), env.Client, env.Scheme, owner, routeKey(ns), desired)
	if !errors.Is(err, httproute.ErrKeyMismatch) {
		t.Fatalf("err = %v, want ErrKeyMismatch", err)
	}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "other"}, &gatewayv1.HTTPRoute{}); !apierrors.IsNotFound(err) {
		t.Errorf("mismatched route was written: %v", err)
	}

	// An unnamed desired route takes the key.
	unnamed := desiredRoute(t, ns)
	unnamed.Name, unnamed.Namespace = "", ""
	if _, _, err := flow(context.Background(), env.Client, env.Scheme, owner, routeKey(ns), unnamed); err != nil {
		t.Fatal(err)
	}
	if unnamed.Name != "dashboard" || unnamed.Namespace != ns || unnamed.UID == "" {
		t.Errorf("unnamed route applied as %s/%s (uid %q)", unnamed.Namespace, unnamed.Name, unnamed.UID)
	}
}

func TestAcceptancePollInterval(t *testing.T) {
	if httproute.AcceptancePollInterval != 10*time.Second {
		t.Errorf("AcceptancePollInterval = %v, want 10s (spec: HTTPRoute acceptance)", httproute.AcceptancePollInterval)
	}
}

func TestFlowNilOwner(t *testing.T) {
	ns := env.Namespace(t)
	var typedNil *corev1.ConfigMap
	for name, owner := range map[string]client.Object{"nil": nil, "typed nil": typedNil} {
		for _, desired := range []*gatewayv1.HTTPRoute{nil, desiredRoute(t, ns)} {
			_, _, err := flow(context.Background(), env.Client, env.Scheme, owner, routeKey(ns), desired)
			if !errors.Is(err, apply.ErrNilOwner) {
				t.Errorf("%s owner, desired %v: err = %v, want apply.ErrNilOwner", name, desired != nil, err)
			}
		}
	}
}

// flow runs httproute.Flow and splits its outcome for the checks of this package.
func flow(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object, key client.ObjectKey,
	desired *gatewayv1.HTTPRoute) (metav1.Condition, ctrl.Result, error) {
	out, err := httproute.Flow(ctx, c, scheme, owner, key, desired)
	return out.Condition, out.Result, err
}

// TestReconcileIsFlow: the deprecated Reconcile answers Flow's outcome, split into a
// condition and a result.
func TestReconcileIsFlow(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, env, ns)
	key := routeKey(ns)
	type answer struct {
		Condition metav1.Condition
		Result    ctrl.Result
		Err       string
	}
	cases := map[string]struct {
		reason  string
		desired func() *gatewayv1.HTTPRoute
		want    answer
	}{
		"wanted": {reason: "an applied route without a verdict is NotAccepted with a requeue",
			desired: func() *gatewayv1.HTTPRoute { return desiredRoute(t, ns) },
			want: answer{Condition: metav1.Condition{Type: httproute.ConditionType, Status: metav1.ConditionFalse,
				Reason: httproute.ReasonNotAccepted, Message: "waiting for Gateway gateways/public listener https to accept HTTPRoute NS/dashboard"},
				Result: ctrl.Result{RequeueAfter: httproute.AcceptancePollInterval}}},
		"key mismatch": {reason: "a refused route is an error with zero values",
			desired: func() *gatewayv1.HTTPRoute { r := desiredRoute(t, ns); r.Name = "other"; return r },
			want:    answer{Err: "reconcile HTTPRoute NS/dashboard: desired object does not match the child's key: desired NS/other, key NS/dashboard"}},
		"not wanted": {reason: "no route is NotRequired",
			desired: func() *gatewayv1.HTTPRoute { return nil },
			want: answer{Condition: metav1.Condition{Type: httproute.ConditionType, Status: metav1.ConditionTrue,
				Reason: httproute.ReasonNotRequired, Message: "no gateway configured: HTTPRoute not required"}}},
	}
	for _, name := range []string{"wanted", "key mismatch", "not wanted"} {
		tc := cases[name]
		t.Run(name, func(t *testing.T) {
			cond, res, err := httproute.Reconcile(ctx, env.Client, env.Scheme, owner, key, tc.desired()) //nolint:staticcheck // the deprecated wrapper under test
			cond.Message = strings.ReplaceAll(cond.Message, ns, "NS")
			got := answer{Condition: cond, Result: res}
			if err != nil {
				got.Err = strings.ReplaceAll(err.Error(), ns, "NS")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
