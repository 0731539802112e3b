package satellite_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/satellite"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

const (
	condGate       = "CredentialsReady"
	condProjected  = "ConfigProjected"
	reasonWaiting  = "WaitingForParent"
	msgWaiting     = "waiting for Widget to exist"
	reasonDemoted  = "ParentNotFound"
	msgDemoted     = "the parent is gone; nothing projects this satellite"
	requeue        = 15 * time.Second
	generation     = int64(3)
	oldGeneration  = int64(2)
	clusterRemote  = "region-one"
	clusterMissing = "region-gone"
)

// t0 is the lastTransitionTime of every seeded condition: a condition whose time is
// still t0 after the call did not flip.
var t0 = metav1.NewTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))

// cond returns a condition written at t0 for gen.
func cond(typ string, status metav1.ConditionStatus, reason, msg string, gen int64) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen, LastTransitionTime: t0}
}

// baseParams are the parameters every row starts from.
func baseParams(c client.Client, ns, parent string, conds *[]metav1.Condition) satellite.ResolveParams {
	return satellite.ResolveParams{
		Client:                    c,
		Parent:                    emptyWidget(),
		ParentKey:                 client.ObjectKey{Namespace: ns, Name: parent},
		ParentKind:                "Widget",
		TargetClusterRef:          widgetTargetRef,
		Conditions:                conds,
		Generation:                generation,
		GateConditionType:         condGate,
		WaitingForParentReason:    reasonWaiting,
		WaitingForParentMessage:   msgWaiting,
		RequeueAfter:              requeue,
		ProjectionDemotionReason:  reasonDemoted,
		ProjectionDemotionMessage: msgDemoted,
	}
}

// moved lists the types of the conditions whose lastTransitionTime is no longer t0.
func moved(conds []metav1.Condition) []string {
	var out []string
	for _, c := range conds {
		if !c.LastTransitionTime.Equal(&t0) {
			out = append(out, c.Type)
		}
	}
	slices.Sort(out)
	return out
}

var condOpts = []cmp.Option{
	cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime"),
	cmpopts.SortSlices(func(a, b metav1.Condition) bool { return a.Type < b.Type }),
	cmpopts.EquateEmpty(),
}

// TestResolveParentChildren runs one row per outcome against Widgets on the test
// control plane: a local parent, a parent on a target cluster, a missing parent (with
// and without projection demotion) and a target cluster that does not resolve.
func TestResolveParentChildren(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	createWidget(t, ns, "local", "")
	createWidget(t, ns, "remote", clusterRemote)
	createWidget(t, ns, "lost", clusterMissing)
	env.CreateBeingDeleted(t, newWidget(ns, "deleting", ""))

	// Distinct clients stand for the management cluster as the resolver returns it
	// and for the target cluster; which one comes back is what the rows check.
	resolverLocal, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	remote, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	which := func(c client.Client) string {
		switch c {
		case nil:
			return "nil"
		case env.Client:
			return "Client"
		case resolverLocal:
			return "resolver's management cluster"
		case remote:
			return "target cluster " + clusterRemote
		}
		return fmt.Sprintf("unknown client %T", c)
	}

	type args struct {
		parent         string
		resolver       bool
		noRefFunc      bool
		projectionType string
		badReason      string
		seeded         []metav1.Condition
	}
	type want struct {
		children   string
		result     ctrl.Result
		err        string
		conds      []metav1.Condition
		moved      []string
		asked      []*commonv1.TargetClusterRefSpec
		parentName string
	}
	gateTrue := cond(condGate, metav1.ConditionTrue, "CredentialsFound", "credentials are present", oldGeneration)
	projectedTrue := cond(condProjected, metav1.ConditionTrue, "Projected", "section found", oldGeneration)
	waiting := cond(condGate, metav1.ConditionFalse, reasonWaiting, msgWaiting, generation)

	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"LocalParentWithoutResolver": {
			reason: "A nil resolver keeps everything local: children is Client, Parent is filled and the conditions stay as they are.",
			args:   args{parent: "local", seeded: []metav1.Condition{gateTrue}},
			want:   want{children: "Client", conds: []metav1.Condition{gateTrue}, parentName: "local"},
		},
		"ParentOnTargetCluster": {
			reason: "TargetClusterRef reads the ref off the filled Parent and the resolver's client for it is returned.",
			args:   args{parent: "remote", resolver: true, seeded: []metav1.Condition{gateTrue}},
			want: want{children: "target cluster " + clusterRemote, conds: []metav1.Condition{gateTrue}, parentName: "remote",
				asked: []*commonv1.TargetClusterRefSpec{{Name: clusterRemote}}},
		},
		"ParentWithoutRefAsksForManagementCluster": {
			reason: "A parent without spec.targetClusterRef is resolved with a nil ref: the resolver's management cluster.",
			args:   args{parent: "local", resolver: true},
			want:   want{children: "resolver's management cluster", parentName: "local", asked: []*commonv1.TargetClusterRefSpec{nil}},
		},
		"NilTargetClusterRefFunc": {
			reason: "Without a TargetClusterRef func the parent kind has no target cluster: the resolver gets a nil ref even if the parent carries one.",
			args:   args{parent: "remote", resolver: true, noRefFunc: true},
			want:   want{children: "resolver's management cluster", parentName: "remote", asked: []*commonv1.TargetClusterRefSpec{nil}},
		},
		"ParentBeingDeletedStillCounts": {
			reason: "A parent with a deletion timestamp still exists and still runs its Deployment.",
			args:   args{parent: "deleting", seeded: []metav1.Condition{gateTrue}},
			want:   want{children: "Client", conds: []metav1.Condition{gateTrue}, parentName: "deleting"},
		},
		"MissingParentWaits": {
			reason: "A missing parent flips the gate to False with the waiting reason and message, and requeues.",
			args:   args{parent: "absent", seeded: []metav1.Condition{gateTrue}},
			want: want{children: "nil", result: ctrl.Result{RequeueAfter: requeue},
				conds: []metav1.Condition{waiting}, moved: []string{condGate}},
		},
		"MissingParentNoFallbackThroughResolver": {
			reason: "With a resolver, a missing parent still returns no client, and the resolver is never asked.",
			args:   args{parent: "absent", resolver: true},
			want: want{children: "nil", result: ctrl.Result{RequeueAfter: requeue},
				conds: []metav1.Condition{waiting}, moved: []string{condGate}},
		},
		"MissingParentKeepsTransitionTime": {
			reason: "A gate already False is updated (generation, message) but its lastTransitionTime stays.",
			args: args{parent: "absent", seeded: []metav1.Condition{
				cond(condGate, metav1.ConditionFalse, reasonWaiting, "older text", oldGeneration)}},
			want: want{children: "nil", result: ctrl.Result{RequeueAfter: requeue}, conds: []metav1.Condition{waiting}},
		},
		"MissingParentDemotesTrueProjection": {
			reason: "With ProjectionConditionType set, a True projection condition flips to False under the demotion reason.",
			args:   args{parent: "absent", projectionType: condProjected, seeded: []metav1.Condition{gateTrue, projectedTrue}},
			want: want{children: "nil", result: ctrl.Result{RequeueAfter: requeue},
				conds: []metav1.Condition{waiting, cond(condProjected, metav1.ConditionFalse, reasonDemoted, msgDemoted, generation)},
				moved: []string{condProjected, condGate}},
		},
		"MissingParentLeavesFalseProjection": {
			reason: "A projection condition already False keeps its reason, message and generation.",
			args: args{parent: "absent", projectionType: condProjected, seeded: []metav1.Condition{
				cond(condProjected, metav1.ConditionFalse, "SectionMissing", "not rendered yet", oldGeneration)}},
			want: want{children: "nil", result: ctrl.Result{RequeueAfter: requeue},
				conds: []metav1.Condition{waiting, cond(condProjected, metav1.ConditionFalse, "SectionMissing", "not rendered yet", oldGeneration)},
				moved: []string{condGate}},
		},
		"MissingParentLeavesUnknownProjection": {
			reason: "Only a True projection condition is demoted; Unknown stays.",
			args: args{parent: "absent", projectionType: condProjected, seeded: []metav1.Condition{
				cond(condProjected, metav1.ConditionUnknown, "Checking", "", oldGeneration)}},
			want: want{children: "nil", result: ctrl.Result{RequeueAfter: requeue},
				conds: []metav1.Condition{waiting, cond(condProjected, metav1.ConditionUnknown, "Checking", "", oldGeneration)},
				moved: []string{condGate}},
		},
		"MissingParentAbsentProjectionStaysAbsent": {
			reason: "An absent projection condition is not created.",
			args:   args{parent: "absent", projectionType: condProjected},
			want: want{children: "nil", result: ctrl.Result{RequeueAfter: requeue},
				conds: []metav1.Condition{waiting}, moved: []string{condGate}},
		},
		"EmptyProjectionTypeDemotesNothing": {
			reason: "Demotion is opt-in: without ProjectionConditionType a True ConfigProjected stays True.",
			args:   args{parent: "absent", seeded: []metav1.Condition{projectedTrue}},
			want: want{children: "nil", result: ctrl.Result{RequeueAfter: requeue},
				conds: []metav1.Condition{waiting, projectedTrue}, moved: []string{condGate}},
		},
		"InvalidReasonReplaced": {
			reason: "A reason the API server would refuse is replaced as reconcile.SetCondition does, so the status write cannot fail.",
			args:   args{parent: "absent", badReason: "waiting for parent"},
			want: want{children: "nil", result: ctrl.Result{RequeueAfter: requeue},
				conds: []metav1.Condition{cond(condGate, metav1.ConditionFalse, reconcile.ReasonInvalidReason,
					`invalid reason "waiting for parent" replaced by InvalidReason: `+msgWaiting, generation)},
				moved: []string{condGate}},
		},
		"TargetClusterUnavailable": {
			reason: "A ref that does not resolve sets the gate False under TargetClusterUnavailable with the resolver's text; projection is not demoted.",
			args:   args{parent: "lost", resolver: true, projectionType: condProjected, seeded: []metav1.Condition{gateTrue, projectedTrue}},
			want: want{children: "nil", result: ctrl.Result{RequeueAfter: requeue}, parentName: "lost",
				conds: []metav1.Condition{
					cond(condGate, metav1.ConditionFalse, multicluster.TargetClusterUnavailable,
						`target cluster unavailable: cluster "region-gone" is not registered`, generation),
					projectedTrue},
				moved: []string{condGate},
				asked: []*commonv1.TargetClusterRefSpec{{Name: clusterMissing}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			conds := slices.Clone(tc.args.seeded)
			p := baseParams(env.Client, ns, tc.args.parent, &conds)
			p.ProjectionConditionType = tc.args.projectionType
			if tc.args.badReason != "" {
				p.WaitingForParentReason = tc.args.badReason
			}
			if tc.args.noRefFunc {
				p.TargetClusterRef = nil
			}
			var r *fakeResolver
			if tc.args.resolver {
				r = &fakeResolver{local: resolverLocal, clusters: map[string]client.Client{clusterRemote: remote}}
				p.Resolver = r
			}

			children, result, err := satellite.ResolveParentChildren(ctx, p)

			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.want.err, gotErr); diff != "" {
				t.Errorf("%s\nerror: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.children, which(children)); diff != "" {
				t.Errorf("%s\nchildren: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.result, result); diff != "" {
				t.Errorf("%s\nresult: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.conds, conds, condOpts...); diff != "" {
				t.Errorf("%s\nconditions: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.moved, moved(conds), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nconditions whose lastTransitionTime moved: -want, +got:\n%s", tc.reason, diff)
			}
			if r != nil {
				if diff := cmp.Diff(tc.want.asked, r.asked(), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s\nrefs the resolver was asked for: -want, +got:\n%s", tc.reason, diff)
				}
			}
			if got := p.Parent.GetName(); got != tc.want.parentName {
				t.Errorf("%s\nParent filled with %q, want %q", tc.reason, got, tc.want.parentName)
			}
		})
	}
}

// TestResolveParentChildrenResolverWithoutClient checks that a resolver answering
// neither an error nor a client is reported as an error, not as an unavailable cluster.
func TestResolveParentChildrenResolverWithoutClient(t *testing.T) {
	ns := env.Namespace(t)
	createWidget(t, ns, "remote", clusterRemote)
	var conds []metav1.Condition
	p := baseParams(env.Client, ns, "remote", &conds)
	p.Resolver = noClientResolver{}

	children, result, err := satellite.ResolveParentChildren(context.Background(), p)

	want := fmt.Sprintf("resolving the target cluster of parent Widget %s/remote: resolver returned no client", ns)
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
	if children != nil || result != (ctrl.Result{}) || len(conds) != 0 {
		t.Errorf("children = %v, result = %+v, conditions = %v; want nil, zero, none", children, result, conds)
	}
}

// TestResolveParentChildrenGetFaults fails the parent's Get with each fault a read can
// meet: the error names the parent and wraps the cause, no client and no requeue come
// back, and the conditions are not touched.
func TestResolveParentChildrenGetFaults(t *testing.T) {
	ns := env.Namespace(t)
	createWidget(t, ns, "local", "")
	for _, f := range faults.Reads() {
		t.Run(f.Name, func(t *testing.T) {
			fi := faults.NewInjector()
			fi.Arm(faults.VerbGet, 1, f)
			seeded := []metav1.Condition{cond(condGate, metav1.ConditionTrue, "CredentialsFound", "", oldGeneration)}
			conds := slices.Clone(seeded)
			p := baseParams(fi.Client(env.Client), ns, "local", &conds)
			p.ProjectionConditionType = condProjected

			children, result, err := satellite.ResolveParentChildren(context.Background(), p)

			prefix := fmt.Sprintf("fetching parent Widget %s/local: ", ns)
			if err == nil || !strings.HasPrefix(err.Error(), prefix) || !errors.Is(err, faults.ErrInjected) {
				t.Fatalf("error = %v, want one starting %q wrapping the injected fault", err, prefix)
			}
			if f.Name == faults.Internal.Name && !apierrors.IsInternalError(err) {
				t.Errorf("the API status of the cause is lost: %v", err)
			}
			if children != nil || result != (ctrl.Result{}) {
				t.Errorf("children = %v, result = %+v; want nil and zero with an error", children, result)
			}
			if diff := cmp.Diff(seeded, conds); diff != "" {
				t.Errorf("conditions changed on a failed read: -want, +got:\n%s", diff)
			}
		})
	}
}

// TestResolveParentChildrenParentKind checks the kind named in error texts when
// ParentKind is empty: the kind in the object's type meta, else its Go type name.
func TestResolveParentChildrenParentKind(t *testing.T) {
	ns := env.Namespace(t)
	cases := map[string]struct {
		reason string
		parent client.Object
		want   string
	}{
		"Unstructured": {
			reason: "An unstructured parent carries its kind.",
			parent: emptyWidget(),
			want:   fmt.Sprintf("fetching parent Widget %s/p: ", ns),
		},
		"Typed": {
			reason: "A typed parent without type meta is named by its Go type.",
			parent: &corev1.ConfigMap{},
			want:   fmt.Sprintf("fetching parent ConfigMap %s/p: ", ns),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fi := faults.NewInjector()
			fi.Arm(faults.VerbGet, 1, faults.Internal)
			var conds []metav1.Condition
			p := baseParams(fi.Client(env.Client), ns, "p", &conds)
			p.ParentKind = ""
			p.Parent = tc.parent
			_, _, err := satellite.ResolveParentChildren(context.Background(), p)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("%s\nerror = %v, want prefix %q", tc.reason, err, tc.want)
			}
		})
	}
}

// TestResolveParentChildrenInvalidParams checks that each required field is refused
// with ErrInvalidParams, naming the field, before any API call.
func TestResolveParentChildrenInvalidParams(t *testing.T) {
	var nilWidget *unstructured.Unstructured
	cases := map[string]struct {
		reason string
		mutate func(p *satellite.ResolveParams)
		field  string
	}{
		"NilClient":         {reason: "The parent cannot be read without a client.", mutate: func(p *satellite.ResolveParams) { p.Client = nil }, field: "ResolveParams.Client"},
		"NilParent":         {reason: "The Get needs an object to fill.", mutate: func(p *satellite.ResolveParams) { p.Parent = nil }, field: "ResolveParams.Parent"},
		"TypedNilParent":    {reason: "A typed nil pointer is as nil as an untyped one.", mutate: func(p *satellite.ResolveParams) { p.Parent = nilWidget }, field: "ResolveParams.Parent"},
		"NilConditions":     {reason: "The outcome has nowhere to land.", mutate: func(p *satellite.ResolveParams) { p.Conditions = nil }, field: "ResolveParams.Conditions"},
		"EmptyGateCondType": {reason: "The gate condition needs a type.", mutate: func(p *satellite.ResolveParams) { p.GateConditionType = "" }, field: "ResolveParams.GateConditionType"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fi := faults.NewInjector()
			var conds []metav1.Condition
			p := baseParams(fi.Client(env.Client), "default", "p", &conds)
			tc.mutate(&p)
			children, result, err := satellite.ResolveParentChildren(context.Background(), p)
			if !errors.Is(err, satellite.ErrInvalidParams) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("%s\nerror = %v, want ErrInvalidParams naming %s", tc.reason, err, tc.field)
			}
			if children != nil || result != (ctrl.Result{}) {
				t.Errorf("%s\nchildren = %v, result = %+v; want nil and zero", tc.reason, children, result)
			}
			if n := fi.Calls(faults.VerbGet); n != 0 {
				t.Errorf("%s\n%d Get calls before the params were checked, want 0", tc.reason, n)
			}
		})
	}
}
