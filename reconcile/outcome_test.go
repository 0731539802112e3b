package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

func TestSettle(t *testing.T) {
	boom := errors.New("boom")
	tests := map[string]struct {
		reason   string
		existing []metav1.Condition
		out      reconcile.Outcome
		err      error
		want     ctrl.Result
		wantErr  error
		wantCond []metav1.Condition
	}{
		"done": {
			reason:   "a True condition is set with the generation, the pass goes on",
			out:      reconcile.Done(reconcile.TrueCondition("XReady", "Ready", "ok")),
			wantCond: []metav1.Condition{{Type: "XReady", Status: metav1.ConditionTrue, Reason: "Ready", Message: "ok", ObservedGeneration: 3}},
		},
		"requeue": {
			reason:   "a gate that did not pass sets False and requeues",
			out:      reconcile.Requeue(reconcile.FalseCondition("XReady", "Waiting", "not yet"), 15*time.Second),
			want:     ctrl.Result{RequeueAfter: 15 * time.Second},
			wantCond: []metav1.Condition{{Type: "XReady", Status: metav1.ConditionFalse, Reason: "Waiting", Message: "not yet", ObservedGeneration: 3}},
		},
		"error with a False condition": {
			reason:   "the flow's failure condition is set and the error alone is returned",
			out:      reconcile.Requeue(reconcile.FalseCondition("XReady", "XError", "boom"), time.Minute),
			err:      boom,
			wantErr:  boom,
			wantCond: []metav1.Condition{{Type: "XReady", Status: metav1.ConditionFalse, Reason: "XError", Message: "boom", ObservedGeneration: 3}},
		},
		"error with a zero condition": {
			reason:   "a zero condition leaves the one the object has",
			existing: []metav1.Condition{{Type: "XReady", Status: metav1.ConditionTrue, Reason: "Ready", Message: "ok", ObservedGeneration: 2}},
			err:      boom,
			wantErr:  boom,
			wantCond: []metav1.Condition{{Type: "XReady", Status: metav1.ConditionTrue, Reason: "Ready", Message: "ok", ObservedGeneration: 2}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := &Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: 3}}
			w.Status.Conditions = tc.existing
			got, err := reconcile.Settle(w, tc.out, tc.err)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("%s: error %v, want %v", tc.reason, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("%s: result %+v, want %+v", tc.reason, got, tc.want)
			}
			if diff := cmp.Diff(tc.wantCond, w.Status.Conditions, ignoreTransition); diff != "" {
				t.Errorf("%s: conditions (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

var ignoreTransition = cmp.Comparer(func(a, b metav1.Time) bool { return true })

func TestPipelineOwnedAndRunStep(t *testing.T) {
	var ran []string
	step := func(name string) reconcile.StepFunc[*Widget] {
		return func(context.Context, *Widget) (ctrl.Result, error) {
			ran = append(ran, name)
			return ctrl.Result{}, nil
		}
	}
	p, err := reconcile.NewPipeline(nil,
		reconcile.Step[*Widget]{Name: "Config", Run: step("Config"), Owns: []client.Object{&corev1.ConfigMap{}}},
		reconcile.Sequential("Workload",
			reconcile.Step[*Widget]{Name: "Deployment", Run: step("Deployment"), Owns: []client.Object{&appsv1.Deployment{}, &corev1.Service{}}},
			reconcile.Step[*Widget]{Name: "Again", Run: step("Again"), Owns: []client.Object{&corev1.ConfigMap{}}},
		),
	)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range p.Owned() {
		kinds = append(kinds, typeName(o))
	}
	if diff := cmp.Diff([]string{"*v1.ConfigMap", "*v1.Deployment", "*v1.Service"}, kinds); diff != "" {
		t.Errorf("Owned (-want +got):\n%s", diff)
	}
	lists, err := p.OwnedLists(clientgoscheme.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	var listKinds []string
	for _, l := range lists {
		listKinds = append(listKinds, typeName(l))
	}
	if diff := cmp.Diff([]string{"*v1.ConfigMapList", "*v1.DeploymentList", "*v1.ServiceList"}, listKinds); diff != "" {
		t.Errorf("OwnedLists (-want +got):\n%s", diff)
	}
	if _, err := p.OwnedLists(runtime.NewScheme()); err == nil {
		t.Error("OwnedLists with a scheme that lacks the kinds: no error")
	}
	if diff := cmp.Diff([]string{"Config", "Workload", "Deployment", "Again"}, p.Steps()); diff != "" {
		t.Errorf("Steps (-want +got):\n%s", diff)
	}
	if _, err := p.RunStep(context.Background(), "Deployment", &Widget{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Deployment"}, ran); diff != "" {
		t.Errorf("RunStep ran (-want +got):\n%s", diff)
	}
	if _, err := p.RunStep(context.Background(), "Nope", &Widget{}); !errors.Is(err, reconcile.ErrUnknownStep) {
		t.Errorf("RunStep(unknown) = %v, want ErrUnknownStep", err)
	}
	if _, err := reconcile.NewPipeline(nil, reconcile.Step[*Widget]{Name: "X", Run: step("X"), Owns: []client.Object{(*corev1.Secret)(nil)}}); !errors.Is(err, reconcile.ErrInvalidPipeline) {
		t.Errorf("a nil Owns entry: %v, want ErrInvalidPipeline", err)
	}
}

func typeName(o any) string { return fmt.Sprintf("%T", o) }
