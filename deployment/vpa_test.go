package deployment_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/capability"
	"github.com/c5c3/reconciler-sdk/deployment"
)

func desiredVPA(ns, name string) *vpav1.VerticalPodAutoscaler {
	return &vpav1.VerticalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: vpav1.VerticalPodAutoscalerSpec{
			TargetRef:    &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			UpdatePolicy: &vpav1.PodUpdatePolicy{UpdateMode: new(vpav1.UpdateModeOff)},
		},
	}
}

func vpaNamesIn(t *testing.T, ns string) []string {
	t.Helper()
	list := &vpav1.VerticalPodAutoscalerList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range list.Items {
		names = append(names, v.Name)
	}
	return names
}

// TestVPAFlowAppliesAndPrunes: the wanted set is applied; VPAs the owner controls
// that are no longer wanted are deleted; VPAs of others are kept.
func TestVPAFlowAppliesAndPrunes(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	other := newOwner(t, ns, "someone-else")

	// Someone else's VPA, and one without any owner, in the same namespace.
	if _, err := vpaFlow(ctx, env.Client, env.Scheme, other, []*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "foreign")}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, desiredVPA(ns, "unowned")); err != nil {
		t.Fatal(err)
	}

	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	web, worker := desiredVPA(ns, "web"), desiredVPA(ns, "worker")
	cond, err := vpaFlow(ctx, c, env.Scheme, owner, []*vpav1.VerticalPodAutoscaler{worker, web})
	if err != nil {
		t.Fatal(err)
	}
	wantCondition(t, cond, deployment.ConditionVPAReady, metav1.ConditionTrue, deployment.ReasonVPAReady, ns+"/web, "+ns+"/worker")
	if ref := metav1.GetControllerOf(web); ref == nil || ref.UID != owner.UID {
		t.Fatalf("controller reference = %+v, want owner %s", ref, owner.UID)
	}

	// Converged: one LIST, and per VPA the control check's GET and one no-op PATCH;
	// nothing else is written.
	counter.Reset()
	web2, worker2 := desiredVPA(ns, "web"), desiredVPA(ns, "worker")
	cond2, err := vpaFlow(ctx, c, env.Scheme, owner, []*vpav1.VerticalPodAutoscaler{web2, worker2})
	if err != nil {
		t.Fatal(err)
	}
	if cond2 != cond {
		t.Errorf("converged condition %+v differs from %+v: a status write on every pass", cond2, cond)
	}
	if web2.ResourceVersion != web.ResourceVersion || worker2.ResourceVersion != worker.ResourceVersion {
		t.Errorf("converged pass bumped resourceVersions")
	}
	if counter.Method("GET") != 3 || counter.Method("PATCH") != 2 || counter.Total() != 5 {
		t.Errorf("converged pass: %d requests (GET=%d PATCH=%d), want 1 list (GET) + 2 GETs + 2 applies",
			counter.Total(), counter.Method("GET"), counter.Method("PATCH"))
	}

	// worker opts out: its VPA is pruned.
	if _, err := vpaFlow(ctx, c, env.Scheme, owner, []*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "web")}); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(vpaNamesIn(t, ns), ","), "foreign,unowned,web"; got != want {
		t.Errorf("after worker opted out: VPAs %s, want %s", got, want)
	}

	// Nothing wanted: everything the owner controls goes; True/VPANotRequired.
	cond, err = vpaFlow(ctx, c, env.Scheme, owner, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantCondition(t, cond, deployment.ConditionVPAReady, metav1.ConditionTrue, deployment.ReasonVPANotRequired)
	if got, want := strings.Join(vpaNamesIn(t, ns), ","), "foreign,unowned"; got != want {
		t.Errorf("after opt-out: VPAs %s, want %s", got, want)
	}
}

// TestVPAFlowNotInstalled removes the VerticalPodAutoscaler CRD from the cluster
// for the duration of the test (and installs it again): an opt-in reports
// VPANotInstalled without error or write, no opt-in reports VPANotRequired, and once
// the CRD is back the same client notices it on the next pass.
func TestVPAFlowNotInstalled(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	env.RemoveCRDs(t, vpaCRDNames...)

	// A fresh client: its mapper has never seen the kind.
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	cond, err := vpaFlow(ctx, c, env.Scheme, owner, []*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "web")})
	if err != nil {
		t.Fatalf("opt-in without the VPA: err = %v, want nil (not an error to retry)", err)
	}
	wantCondition(t, cond, deployment.ConditionVPAReady, metav1.ConditionFalse, deployment.ReasonVPANotInstalled,
		"autoscaling.k8s.io/v1 VerticalPodAutoscaler", ns+"/web")
	if counter.Writes() != 0 {
		t.Errorf("not installed: %d writes, want 0", counter.Writes())
	}

	cond, err = vpaFlow(ctx, c, env.Scheme, owner, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantCondition(t, cond, deployment.ConditionVPAReady, metav1.ConditionTrue, deployment.ReasonVPANotRequired)

	env.InstallCRDs(t, vpaCRDs)
	cond, err = vpaFlow(ctx, c, env.Scheme, owner, []*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "web")})
	if err != nil {
		t.Fatal(err)
	}
	wantCondition(t, cond, deployment.ConditionVPAReady, metav1.ConditionTrue, deployment.ReasonVPAReady)
}

// vpaCRDNames are the CRDs of the VPA manifest (vpaCRDs).
var vpaCRDNames = []string{"verticalpodautoscalers.autoscaling.k8s.io", "verticalpodautoscalercheckpoints.autoscaling.k8s.io"}

// failDiscovery answers every discovery request for API groups with 503, the way an
// overloaded API server or a broken aggregated API does; other requests pass.
type failDiscovery struct{ next http.RoundTripper }

func (f failDiscovery) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && (req.URL.Path == "/apis" || strings.HasPrefix(req.URL.Path, "/apis/autoscaling.k8s.io")) &&
		!strings.Contains(req.URL.Path, "/namespaces/") {
		return &http.Response{
			StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable",
			Header: http.Header{"Content-Type": []string{"text/plain"}},
			Body:   http.NoBody, Request: req,
		}, nil
	}
	return f.next.RoundTrip(req)
}

func TestVPAFlowCapabilityProbeFailed(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return failDiscovery{next: rt} })
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	for name, desired := range map[string][]*vpav1.VerticalPodAutoscaler{
		"wanted":     {desiredVPA(ns, "web")},
		"not wanted": nil,
	} {
		t.Run(name, func(t *testing.T) {
			cond, err := vpaFlow(ctx, c, env.Scheme, owner, desired)
			if !errors.Is(err, capability.ErrProbeFailed) {
				t.Fatalf("err = %v, want ErrProbeFailed", err)
			}
			wantCondition(t, cond, deployment.ConditionVPAReady, metav1.ConditionFalse, deployment.ReasonCapabilityProbeFailed, "VerticalPodAutoscaler")
		})
	}
	if got := vpaNamesIn(t, ns); len(got) != 0 {
		t.Errorf("probe failure wrote VPAs: %v", got)
	}
}

func TestVPAFlowErrors(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "autoscaling.k8s.io", Resource: "verticalpodautoscalers"}, "web", errors.New("denied"))

	t.Run("invalid set is refused before any request", func(t *testing.T) {
		c, counter, err := env.CountingClient()
		if err != nil {
			t.Fatal(err)
		}
		for name, tc := range map[string]struct {
			owner   client.Object
			desired []*vpav1.VerticalPodAutoscaler
			want    error
			names   string
		}{
			"nil entry":    {owner, []*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "web"), nil}, deployment.ErrInvalidVPASet, "entry 1"},
			"no name":      {owner, []*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "")}, deployment.ErrInvalidVPASet, "metadata.name"},
			"duplicate":    {owner, []*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "web"), desiredVPA(ns, "web")}, deployment.ErrInvalidVPASet, ns + "/web"},
			"nil owner":    {nil, nil, applyErrNilOwner, "owner"},
			"owner no UID": {newUnpersisted(ns), nil, applyErrOwnerNotPersisted, ns + "/ghost"},
		} {
			cond, err := vpaFlow(ctx, c, env.Scheme, tc.owner, tc.desired)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.names) {
				t.Errorf("%s: err = %v, want %v naming %q", name, err, tc.want, tc.names)
			}
			wantCondition(t, cond, deployment.ConditionVPAReady, metav1.ConditionFalse, deployment.ReasonVPAError)
		}
		if counter.Total() != 0 {
			t.Errorf("invalid input sent %d requests, want 0", counter.Total())
		}
	})

	for name, funcs := range map[string]interceptor.Funcs{
		"apply fails": {Apply: func(ctx context.Context, c client.WithWatch, obj runtimeApplyConfiguration, opts ...client.ApplyOption) error {
			return forbidden
		}},
		"list fails": {List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			return forbidden
		}},
	} {
		t.Run(name, func(t *testing.T) {
			failing := interceptor.NewClient(withWatch(t), funcs)
			cond, err := vpaFlow(ctx, failing, env.Scheme, owner, []*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "web")})
			if !apierrors.IsForbidden(err) {
				t.Fatalf("err = %v, want Forbidden", err)
			}
			wantCondition(t, cond, deployment.ConditionVPAReady, metav1.ConditionFalse, deployment.ReasonVPAError, "VerticalPodAutoscaler")
		})
	}

	t.Run("delete fails during prune", func(t *testing.T) {
		if _, err := vpaFlow(ctx, env.Client, env.Scheme, owner, []*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "old")}); err != nil {
			t.Fatal(err)
		}
		failing := interceptor.NewClient(withWatch(t), interceptor.Funcs{
			Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				return forbidden
			},
		})
		cond, err := vpaFlow(ctx, failing, env.Scheme, owner, nil)
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "VerticalPodAutoscaler "+ns+"/old") {
			t.Fatalf("err = %v, want Forbidden naming the VPA", err)
		}
		wantCondition(t, cond, deployment.ConditionVPAReady, metav1.ConditionFalse, deployment.ReasonVPAError)
	})
}

// vpaFlow runs deployment.VPAFlow and returns its condition; the flow never asks for a
// requeue (TestVPAFlowNeverRequeues).
func vpaFlow(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object,
	desired []*vpav1.VerticalPodAutoscaler) (metav1.Condition, error) {
	out, err := deployment.VPAFlow(ctx, c, scheme, owner, desired)
	return out.Condition, err
}

// TestVPAFlowNeverRequeues: every answer of the VPA flow, True, False or an error, lets
// the pass go on: the flow is rerun by the next pass or the error's back-off.
func TestVPAFlowNeverRequeues(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	for name, desired := range map[string][]*vpav1.VerticalPodAutoscaler{
		"wanted": {desiredVPA(ns, "web")}, "none wanted": nil, "invalid": {nil},
	} {
		t.Run(name, func(t *testing.T) {
			out, _ := deployment.VPAFlow(ctx, env.Client, env.Scheme, owner, desired)
			if !out.Continue() || out.Condition.Type != deployment.ConditionVPAReady {
				t.Errorf("outcome %+v, want the VPAReady condition and no requeue", out)
			}
		})
	}
}

// TestReconcileVPAIsVPAFlow: the deprecated ReconcileVPA answers VPAFlow's condition,
// its False VPAError condition included.
func TestReconcileVPAIsVPAFlow(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	cond, err := deployment.ReconcileVPA(ctx, env.Client, env.Scheme, owner, []*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "web")}) //nolint:staticcheck // the deprecated wrapper under test
	if err != nil {
		t.Fatal(err)
	}
	wantCondition(t, cond, deployment.ConditionVPAReady, metav1.ConditionTrue, deployment.ReasonVPAReady, "VerticalPodAutoscaler applied: "+ns+"/web")
	cond, err = deployment.ReconcileVPA(ctx, env.Client, env.Scheme, owner, []*vpav1.VerticalPodAutoscaler{nil}) //nolint:staticcheck // the deprecated wrapper under test
	if !errors.Is(err, deployment.ErrInvalidVPASet) {
		t.Fatalf("err = %v, want ErrInvalidVPASet", err)
	}
	wantCondition(t, cond, deployment.ConditionVPAReady, metav1.ConditionFalse, deployment.ReasonVPAError, "entry 0 is nil")
	cond, err = deployment.ReconcileVPA(ctx, env.Client, env.Scheme, owner, nil) //nolint:staticcheck // the deprecated wrapper under test
	if err != nil {
		t.Fatal(err)
	}
	wantCondition(t, cond, deployment.ConditionVPAReady, metav1.ConditionTrue, deployment.ReasonVPANotRequired, "no VerticalPodAutoscaler is requested")
}
