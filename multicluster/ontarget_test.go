package multicluster_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/multicluster"
)

func TestOnTarget(t *testing.T) {
	local := &multicluster.Target{}
	edge := &multicluster.Target{Name: "edge"}
	unavailable := &multicluster.UnavailableError{Cluster: "gone", Reason: "is not registered"}
	cases := map[string]struct {
		reason     string
		ref        *commonv1.TargetClusterRefSpec
		resolver   fakeResolver
		runResult  ctrl.Result
		runErr     error
		wantTarget *multicluster.Target // nil: run is not called
		wantResult ctrl.Result
		wantErr    error
		finalizers []string
		condReason string
	}{
		"management cluster": {
			reason:   "a CR without a target runs its steps locally, with no finalizer and no recheck",
			resolver: fakeResolver{local: local}, wantTarget: local,
		},
		"target cluster": {
			reason: "a named cluster gets a finalizer, the steps write there, and a converged pass rechecks",
			ref:    &commonv1.TargetClusterRefSpec{Name: "edge"}, resolver: fakeResolver{local: local, target: edge},
			wantTarget: edge, wantResult: ctrl.Result{RequeueAfter: multicluster.RetryInterval},
			finalizers: []string{multicluster.FinalizerFor("edge")},
		},
		"a step requeues": {
			reason: "the steps' own result wins over the recheck",
			ref:    &commonv1.TargetClusterRefSpec{Name: "edge"}, resolver: fakeResolver{local: local, target: edge},
			runResult: ctrl.Result{RequeueAfter: 3}, wantTarget: edge, wantResult: ctrl.Result{RequeueAfter: 3},
			finalizers: []string{multicluster.FinalizerFor("edge")},
		},
		"a step fails": {
			reason: "the steps' error is returned alone",
			ref:    &commonv1.TargetClusterRefSpec{Name: "edge"}, resolver: fakeResolver{local: local, target: edge},
			runErr: errors.New("boom"), wantTarget: edge, wantErr: errors.New("boom"),
			finalizers: []string{multicluster.FinalizerFor("edge")},
		},
		"unavailable cluster": {
			reason: "nothing runs and the condition says why",
			ref:    &commonv1.TargetClusterRefSpec{Name: "gone"}, resolver: fakeResolver{local: local, err: unavailable},
			wantResult: ctrl.Result{RequeueAfter: multicluster.RetryInterval},
			condReason: multicluster.TargetClusterUnavailable,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			cl, err := multicluster.NewCleanup(tc.resolver, multicluster.CleanupOptions{Children: []client.ObjectList{&corev1.ConfigMapList{}}})
			if err != nil {
				t.Fatal(err)
			}
			g := &Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: ns}, Spec: GadgetSpec{TargetClusterRef: tc.ref}}
			if err := env.Client.Create(context.Background(), g); err != nil {
				t.Fatal(err)
			}
			var got *multicluster.Target
			res, err := multicluster.OnTarget(context.Background(), env.Client, cl, g, tc.ref, "ChildrenReady",
				func(ctx context.Context, _ *Gadget) (ctrl.Result, error) {
					got = multicluster.TargetFrom(ctx)
					return tc.runResult, tc.runErr
				})
			if got != tc.wantTarget {
				t.Errorf("%s: steps ran on %v, want %v", tc.reason, got, tc.wantTarget)
			}
			if res != tc.wantResult || (err == nil) != (tc.wantErr == nil) || (err != nil && err.Error() != tc.wantErr.Error()) {
				t.Errorf("%s: OnTarget = %v, %v; want %v, %v", tc.reason, res, err, tc.wantResult, tc.wantErr)
			}
			if diff := cmp.Diff(tc.finalizers, g.Finalizers); diff != "" {
				t.Errorf("%s: finalizers (-want +got):\n%s", tc.reason, diff)
			}
			c := meta.FindStatusCondition(g.Status.Conditions, "ChildrenReady")
			if tc.condReason != "" && (c == nil || c.Reason != tc.condReason || c.Status != metav1.ConditionFalse) {
				t.Errorf("%s: condition = %+v, want False %s", tc.reason, c, tc.condReason)
			}
			if tc.condReason == "" && c != nil {
				t.Errorf("%s: condition set: %+v", tc.reason, c)
			}
		})
	}
}

// A CR being deleted is finalized: its target clusters are swept and its finalizers
// removed, and the steps do not run.
func TestOnTargetFinalizesADeletedCR(t *testing.T) {
	ns := env.Namespace(t)
	resolver := fakeResolver{local: &multicluster.Target{}, target: &multicluster.Target{Name: "edge", Client: env.Client}}
	cl, err := multicluster.NewCleanup(resolver, multicluster.CleanupOptions{Children: []client.ObjectList{&corev1.ConfigMapList{}}})
	if err != nil {
		t.Fatal(err)
	}
	ref := &commonv1.TargetClusterRefSpec{Name: "edge"}
	g := &Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: ns, Finalizers: []string{multicluster.FinalizerFor("edge")}},
		Spec: GadgetSpec{TargetClusterRef: ref}}
	if err := env.Client.Create(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(g), g); err != nil {
		t.Fatal(err)
	}
	ran := false
	_, err = multicluster.OnTarget(context.Background(), env.Client, cl, g, ref, "ChildrenReady",
		func(context.Context, *Gadget) (ctrl.Result, error) { ran = true; return ctrl.Result{}, nil })
	if err != nil || ran {
		t.Fatalf("OnTarget on a deleted CR: err %v, steps ran %v", err, ran)
	}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(g), g); err == nil {
		t.Fatalf("the CR still exists with finalizers %v", g.Finalizers)
	}
}

func TestOnTargetRefusesBadInput(t *testing.T) {
	cl, err := multicluster.NewCleanup(fakeResolver{}, multicluster.CleanupOptions{Children: []client.ObjectList{&corev1.ConfigMapList{}}})
	if err != nil {
		t.Fatal(err)
	}
	run := func(context.Context, *Gadget) (ctrl.Result, error) { return ctrl.Result{}, nil }
	for name, call := range map[string]func() error{
		"nil cleanup": func() error {
			_, err := multicluster.OnTarget(context.Background(), env.Client, nil, &Gadget{}, nil, "C", run)
			return err
		},
		"nil run": func() error {
			_, err := multicluster.OnTarget[*Gadget](context.Background(), env.Client, cl, &Gadget{}, nil, "C", nil)
			return err
		},
		"empty condition type": func() error {
			_, err := multicluster.OnTarget(context.Background(), env.Client, cl, &Gadget{}, nil, "", run)
			return err
		},
	} {
		if err := call(); !errors.Is(err, multicluster.ErrInvalidOptions) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
