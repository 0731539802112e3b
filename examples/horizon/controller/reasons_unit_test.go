package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/capability"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// ReasonsStepNames are the names of r's step table (reconcile.Pipeline.Steps): every
// row, the Exposure group and its members, in pipeline order.
func ReasonsStepNames(r *Reconciler) []string { return r.pipelineOf().Steps() }

// ReasonsRunStep runs the row name of r's step table on h outside a pass
// (reconcile.Pipeline.RunStep), writing to target (whose Client the test may wrap, e.g.
// with a faults.Injector), and returns what the step returned. h's conditions are what
// the step set.
func ReasonsRunStep(ctx context.Context, r *Reconciler, name string, target *multicluster.Target, h *v1alpha1.Horizon) (ctrl.Result, error) {
	return r.pipelineOf().RunStep(multicluster.WithTarget(ctx, target), name, h)
}

// pipelineOf is r's pipeline, or one built from its step table for a Reconciler the
// test made without NewReconciler.
func (r *Reconciler) pipelineOf() *reconcile.Pipeline[*v1alpha1.Horizon] {
	if r.CRReconciler != nil {
		return r.Pipeline()
	}
	p, err := reconcile.NewPipeline(nil, r.steps()...)
	if err != nil {
		panic(err)
	}
	return p
}

// failingMapper answers every RESTMapping with err: a cluster whose discovery fails
// (err not a no-match error) or that does not serve the kind (a no-match error).
type failingMapper struct {
	meta.RESTMapper
	err error
}

func (m failingMapper) RESTMapping(schema.GroupKind, ...string) (*meta.RESTMapping, error) {
	return nil, m.err
}

// unitHorizon is a Horizon with a UID (a valid owner) that asks for an HTTPRoute and a
// VerticalPodAutoscaler.
func unitHorizon() *v1alpha1.Horizon {
	return &v1alpha1.Horizon{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "dashboard", UID: types.UID("uid-1"), Generation: 4},
		Spec: v1alpha1.HorizonSpec{
			Image: "registry.example/horizon:2025.1",
			Gateway: &v1alpha1.GatewaySpec{
				ParentRef: v1alpha1.GatewayParentRef{Name: "public"}, Hostname: "dashboard.example.com", Path: "/",
			},
			VPA: &v1alpha1.VPASpec{Enabled: true},
		},
	}
}

// The capability probes of the HTTPRoute and VPA rows tell a cluster that does not
// serve the kind (GatewayAPINotInstalled, VPANotInstalled: a verdict, no error) from one
// whose discovery failed (CapabilityProbeFailed, with the error returned and no
// requeue), before any call to the cluster. The RESTMapper fault cannot be produced by
// a real API server on demand, so the cluster here is a fake client whose mapper fails.
func TestStepCapabilityProbe(t *testing.T) {
	scheme, err := testenv.NewSchemeWith(v1alpha1.AddToScheme)
	if err != nil {
		t.Fatal(err)
	}
	discoveryDown := fmt.Errorf("the server is currently unable to handle the request (get %s)", "autoscaling.k8s.io/v1")
	noMatch := func(group, version string) error {
		return &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: group}, SearchedVersions: []string{version}}
	}
	cases := []struct {
		step, condition string
		mapperErr       error
		reason          string
		message         string
		wantErr         bool
	}{
		{"HTTPRoute", ConditionHTTPRouteReady, discoveryDown, capability.ReasonCapabilityProbeFailed,
			"cannot tell whether the cluster serves HTTPRoute.gateway.networking.k8s.io: discovery failed", true},
		{"VPA", ConditionVPAReady, discoveryDown, capability.ReasonCapabilityProbeFailed,
			"capability probe failed: is VerticalPodAutoscaler.autoscaling.k8s.io/v1 served", true},
		{"HTTPRoute", ConditionHTTPRouteReady, noMatch("gateway.networking.k8s.io", "v1"), "GatewayAPINotInstalled",
			"the cluster does not serve gateway.networking.k8s.io/v1 HTTPRoute", false},
		{"VPA", ConditionVPAReady, noMatch("autoscaling.k8s.io", "v1"), "VPANotInstalled",
			"the cluster does not serve autoscaling.k8s.io/v1 VerticalPodAutoscaler", false},
	}
	for _, tc := range cases {
		t.Run(tc.step+"/"+tc.reason, func(t *testing.T) {
			calls := 0
			c := fake.NewClientBuilder().WithScheme(scheme).
				WithRESTMapper(failingMapper{RESTMapper: meta.NewDefaultRESTMapper(nil), err: tc.mapperErr}).Build()
			counted := faults.NewInjector()
			target := &multicluster.Target{Client: apply.NewApplier(counted.Client(c), apply.ApplierOptions{FieldManager: FieldManager})}
			r := &Reconciler{opts: DefaultOptions()}
			h := unitHorizon()
			res, err := ReasonsRunStep(context.Background(), r, tc.step, target, h)
			for _, v := range faults.Verbs() {
				calls += counted.Calls(v)
			}
			if calls != 0 {
				t.Errorf("the step sent %d calls to a cluster it could not probe", calls)
			}
			if !res.IsZero() {
				t.Errorf("result = %+v, want zero", res)
			}
			switch {
			case tc.wantErr && !errors.Is(err, capability.ErrProbeFailed):
				t.Errorf("err = %v, want one wrapping capability.ErrProbeFailed", err)
			case !tc.wantErr && err != nil:
				t.Errorf("err = %v, want nil", err)
			}
			expectUnitCondition(t, h, tc.condition, metav1.ConditionFalse, tc.reason, tc.message)
		})
	}
}

// expectUnitCondition fails t unless h carries condType with status, reason, a message
// containing msg and observedGeneration = metadata.generation.
func expectUnitCondition(t *testing.T, h *v1alpha1.Horizon, condType string, status metav1.ConditionStatus, reason, msg string) {
	t.Helper()
	c := meta.FindStatusCondition(h.Status.Conditions, condType)
	switch {
	case c == nil:
		t.Fatalf("no %s condition in %+v", condType, h.Status.Conditions)
	case c.Status != status || c.Reason != reason:
		t.Fatalf("%s = %s/%s (%q), want %s/%s", condType, c.Status, c.Reason, c.Message, status, reason)
	case !strings.Contains(c.Message, msg):
		t.Fatalf("%s message = %q, want it to contain %q", condType, c.Message, msg)
	case c.ObservedGeneration != h.Generation:
		t.Fatalf("%s observedGeneration = %d, want %d", condType, c.ObservedGeneration, h.Generation)
	}
}

// compile-time check that the mapper wrapper is a RESTMapper.
var _ meta.RESTMapper = failingMapper{}
