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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/netpol"
)

func newOwner(t testing.TB, ns string) *corev1.ConfigMap {
	t.Helper()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dashboard", Namespace: ns}}
	if err := env.Client.Create(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	return owner
}

func policyKey(ns string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: "dashboard"} }

// desiredPolicy allows ingress to the dashboard pods on port 8080 from the given
// namespaces (by name label).
func desiredPolicy(ns string, fromNamespaces ...string) *networkingv1.NetworkPolicy {
	var rules []networkingv1.NetworkPolicyIngressRule
	for _, from := range fromNamespaces {
		rules = append(rules, networkingv1.NetworkPolicyIngressRule{
			From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": from}}}},
			Ports: []networkingv1.NetworkPolicyPort{{Port: new(intstr.FromInt32(8080))}},
		})
	}
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "dashboard", Namespace: ns},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "dashboard"}},
			Ingress:     rules,
		},
	}
}

func checkCond(t *testing.T, step string, got metav1.Condition, err error, reason, msgHas string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", step, err)
	}
	want := metav1.Condition{Type: netpol.ConditionType, Status: metav1.ConditionTrue, Reason: reason}
	msg := got.Message
	got.Message = ""
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: condition (-want +got):\n%s", step, diff)
	}
	if !strings.Contains(msg, msgHas) {
		t.Errorf("%s: message %q does not contain %q", step, msg, msgHas)
	}
}

func TestFlowLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	key := policyKey(ns)
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}

	created := desiredPolicy(ns, "gateways")
	cond, err := flowCond(t, ctx, c, env.Scheme, owner, key, created)
	checkCond(t, "created", cond, err, netpol.ReasonReady, "NetworkPolicy "+ns+"/dashboard applied with 1 ingress rule(s)")
	if ref := metav1.GetControllerOf(created); ref == nil || ref.UID != owner.UID {
		t.Fatalf("controller reference = %+v, want owner %s", ref, owner.UID)
	}

	// A converged pass: one no-op apply, resourceVersion unchanged.
	counter.Reset()
	again := desiredPolicy(ns, "gateways")
	if _, err := flowCond(t, ctx, c, env.Scheme, owner, key, again); err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != created.ResourceVersion {
		t.Errorf("converged pass moved resourceVersion %s -> %s", created.ResourceVersion, again.ResourceVersion)
	}
	if counter.Writes() != 1 || counter.Method("PATCH") != 1 {
		t.Errorf("converged pass: %d writes (%d PATCH), want the one no-op apply", counter.Writes(), counter.Method("PATCH"))
	}

	// New rules are applied.
	widened := desiredPolicy(ns, "gateways", "monitoring")
	cond, err = flowCond(t, ctx, c, env.Scheme, owner, key, widened)
	checkCond(t, "widened", cond, err, netpol.ReasonReady, "2 ingress rule(s)")
	stored := &networkingv1.NetworkPolicy{}
	if err := env.Client.Get(ctx, key, stored); err != nil {
		t.Fatal(err)
	}
	if len(stored.Spec.Ingress) != 2 || stored.Generation == created.Generation {
		t.Fatalf("stored ingress rules = %d at generation %d (was %d), want 2 at a new generation",
			len(stored.Spec.Ingress), stored.Generation, created.Generation)
	}

	// Removed from the spec: deleted.
	cond, err = flowCond(t, ctx, c, env.Scheme, owner, key, nil)
	checkCond(t, "removed", cond, err, netpol.ReasonNotRequired, "not required")
	if err := env.Client.Get(ctx, key, &networkingv1.NetworkPolicy{}); !apierrors.IsNotFound(err) {
		t.Fatalf("policy still there after removal: %v", err)
	}
	counter.Reset()
	cond, err = flowCond(t, ctx, c, env.Scheme, owner, key, nil)
	checkCond(t, "removed again", cond, err, netpol.ReasonNotRequired, "not required")
	if counter.Writes() != 0 {
		t.Errorf("converged removal wrote %d times", counter.Writes())
	}
}

func TestFlowRefusesEmptyIngress(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	key := policyKey(ns)
	existing := desiredPolicy(ns, "gateways")
	if _, err := flowCond(t, ctx, env.Client, env.Scheme, owner, key, existing); err != nil {
		t.Fatal(err)
	}
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}

	ingressTypes := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
	bothTypes := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
	cases := map[string]func(*networkingv1.NetworkPolicy){
		"nil ingress":                  func(p *networkingv1.NetworkPolicy) { p.Spec.Ingress = nil },
		"empty ingress":                func(p *networkingv1.NetworkPolicy) { p.Spec.Ingress = []networkingv1.NetworkPolicyIngressRule{} },
		"explicit Ingress policy type": func(p *networkingv1.NetworkPolicy) { p.Spec.Ingress, p.Spec.PolicyTypes = nil, ingressTypes },
		"Ingress and Egress types":     func(p *networkingv1.NetworkPolicy) { p.Spec.Ingress, p.Spec.PolicyTypes = nil, bothTypes },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			desired := desiredPolicy(ns, "gateways")
			mutate(desired)
			counter.Reset()
			cond, err := flowCond(t, ctx, c, env.Scheme, owner, key, desired)
			if !errors.Is(err, netpol.ErrEmptyIngress) {
				t.Fatalf("err = %v, want ErrEmptyIngress", err)
			}
			for _, s := range []string{"NetworkPolicy " + ns + "/dashboard", "spec.ingress is empty", "denies all ingress", "left unchanged"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if cond != (metav1.Condition{}) {
				t.Errorf("condition %+v returned with an error, want zero", cond)
			}
			if counter.Total() != 0 {
				t.Errorf("refused policy sent %d API requests, want 0", counter.Total())
			}
			stored := &networkingv1.NetworkPolicy{}
			if err := env.Client.Get(ctx, key, stored); err != nil {
				t.Fatal(err)
			}
			if stored.ResourceVersion != existing.ResourceVersion || len(stored.Spec.Ingress) != 1 {
				t.Errorf("existing policy changed: rv %s -> %s, %d ingress rules",
					existing.ResourceVersion, stored.ResourceVersion, len(stored.Spec.Ingress))
			}
		})
	}
}

func TestFlowAcceptsWhatIsNotAnEmptyIngressList(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	cases := map[string]func(*networkingv1.NetworkPolicy){
		// An egress-only policy does not restrict ingress at all.
		"egress only": func(p *networkingv1.NetworkPolicy) {
			p.Spec.Ingress = nil
			p.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}
			p.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{}}
		},
		// One empty rule allows all ingress: explicit, so accepted.
		"allow all": func(p *networkingv1.NetworkPolicy) { p.Spec.Ingress = []networkingv1.NetworkPolicyIngressRule{{}} },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			key := client.ObjectKey{Namespace: ns, Name: strings.ReplaceAll(name, " ", "-")}
			desired := desiredPolicy(ns)
			desired.Name = key.Name
			mutate(desired)
			cond, err := flowCond(t, ctx, env.Client, env.Scheme, owner, key, desired)
			checkCond(t, name, cond, err, netpol.ReasonReady, "applied")
			if desired.UID == "" {
				t.Error("policy not stored")
			}
		})
	}
}

func TestFlowLeavesForeignPolicy(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	key := policyKey(ns)
	if err := env.Client.Create(ctx, desiredPolicy(ns, "gateways")); err != nil {
		t.Fatal(err)
	}
	cond, err := flowCond(t, ctx, env.Client, env.Scheme, owner, key, nil)
	checkCond(t, "foreign", cond, err, netpol.ReasonNotRequired,
		"NetworkPolicy "+ns+"/dashboard is not controlled by dashboard and was left in place")
	if err := env.Client.Get(ctx, key, &networkingv1.NetworkPolicy{}); err != nil {
		t.Errorf("foreign policy was deleted: %v", err)
	}
}

func TestFlowErrorsPropagate(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	key := policyKey(ns)
	if _, err := flowCond(t, ctx, env.Client, env.Scheme, owner, key, desiredPolicy(ns, "gateways")); err != nil {
		t.Fatal(err)
	}
	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "networking.k8s.io", Resource: "networkpolicies"}, "dashboard", errors.New("denied"))
	cases := map[string]struct {
		funcs   interceptor.Funcs
		desired *networkingv1.NetworkPolicy
	}{
		"apply": {desired: desiredPolicy(ns, "gateways"), funcs: interceptor.Funcs{
			Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
				return forbidden
			}}},
		"get": {funcs: interceptor.Funcs{
			Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
				return forbidden
			}}},
		"delete": {funcs: interceptor.Funcs{
			Delete: func(context.Context, client.WithWatch, client.Object, ...client.DeleteOption) error { return forbidden }}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cond, err := flowCond(t, ctx, interceptor.NewClient(base, tc.funcs), env.Scheme, owner, key, tc.desired)
			if !apierrors.IsForbidden(err) {
				t.Fatalf("err = %v, want Forbidden", err)
			}
			if !strings.Contains(err.Error(), "NetworkPolicy "+ns+"/dashboard") {
				t.Errorf("error %q does not name the policy", err)
			}
			if cond != (metav1.Condition{}) {
				t.Errorf("condition %+v returned with an error, want zero", cond)
			}
		})
	}
	if err := env.Client.Get(ctx, key, &networkingv1.NetworkPolicy{}); err != nil {
		t.Errorf("policy lost after failed calls: %v", err)
	}
}

func TestFlowKeyMismatch(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	desired := desiredPolicy(ns, "gateways")
	desired.Namespace = "elsewhere"
	if _, err := flowCond(t, context.Background(), env.Client, env.Scheme, owner, policyKey(ns), desired); !errors.Is(err, netpol.ErrKeyMismatch) {
		t.Fatalf("err = %v, want ErrKeyMismatch", err)
	}
	unnamed := desiredPolicy("", "gateways")
	unnamed.Name = ""
	if _, err := flowCond(t, context.Background(), env.Client, env.Scheme, owner, policyKey(ns), unnamed); err != nil {
		t.Fatal(err)
	}
	if unnamed.Name != "dashboard" || unnamed.Namespace != ns || unnamed.UID == "" {
		t.Errorf("unnamed policy applied as %s/%s (uid %q)", unnamed.Namespace, unnamed.Name, unnamed.UID)
	}
}

func TestFlowNilOwner(t *testing.T) {
	ns := env.Namespace(t)
	var typedNil *corev1.ConfigMap
	for name, owner := range map[string]client.Object{"nil": nil, "typed nil": typedNil} {
		for _, desired := range []*networkingv1.NetworkPolicy{nil, desiredPolicy(ns, "gateways")} {
			_, err := flowCond(t, context.Background(), env.Client, env.Scheme, owner, policyKey(ns), desired)
			if !errors.Is(err, apply.ErrNilOwner) {
				t.Errorf("%s owner, desired %v: err = %v, want apply.ErrNilOwner", name, desired != nil, err)
			}
		}
	}
}

// flowCond runs netpol.Flow and returns its condition; the flow never asks for a
// requeue, so a non-zero Result fails the test.
func flowCond(t testing.TB, ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object,
	key client.ObjectKey, desired *networkingv1.NetworkPolicy) (metav1.Condition, error) {
	t.Helper()
	out, err := netpol.Flow(ctx, c, scheme, owner, key, desired)
	if !out.Result.IsZero() {
		t.Errorf("netpol.Flow asked for a requeue: %+v", out.Result)
	}
	return out.Condition, err
}

// TestReconcileIsFlow: the deprecated Reconcile answers the condition of Flow, and its
// error with the zero condition.
func TestReconcileIsFlow(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	key := policyKey(ns)
	cases := map[string]struct {
		reason  string
		desired func() *networkingv1.NetworkPolicy
		want    metav1.Condition
		err     error
	}{
		"wanted": {reason: "an applied policy is NetworkPolicyReady",
			desired: func() *networkingv1.NetworkPolicy { return desiredPolicy(ns, "gateways") },
			want: metav1.Condition{Type: netpol.ConditionType, Status: metav1.ConditionTrue, Reason: netpol.ReasonReady,
				Message: "NetworkPolicy " + ns + "/dashboard applied with 1 ingress rule(s)"}},
		"empty ingress": {reason: "a refused policy is an error with the zero condition",
			desired: func() *networkingv1.NetworkPolicy { return desiredPolicy(ns) }, err: netpol.ErrEmptyIngress},
		"not wanted": {reason: "no policy is NetworkPolicyNotRequired",
			desired: func() *networkingv1.NetworkPolicy { return nil },
			want: metav1.Condition{Type: netpol.ConditionType, Status: metav1.ConditionTrue, Reason: netpol.ReasonNotRequired,
				Message: "no network policy configured: NetworkPolicy not required"}},
	}
	for _, name := range []string{"wanted", "empty ingress", "not wanted"} {
		tc := cases[name]
		t.Run(name, func(t *testing.T) {
			cond, err := netpol.Reconcile(ctx, env.Client, env.Scheme, owner, key, tc.desired()) //nolint:staticcheck // the deprecated wrapper under test
			if !errors.Is(err, tc.err) {
				t.Fatalf("%s: err = %v, want %v", tc.reason, err, tc.err)
			}
			if diff := cmp.Diff(tc.want, cond); diff != "" {
				t.Errorf("%s: condition (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
