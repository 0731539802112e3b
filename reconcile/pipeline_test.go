package reconcile_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

var (
	errBoom  = errors.New("boom")
	errOther = errors.New("other")
)

func newWidget(generation int64) *Widget {
	return &Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", Generation: generation}}
}

// recorder builds steps that log their name when they run.
type recorder struct {
	mu  sync.Mutex
	ran []string
}

func (r *recorder) step(name string, res ctrl.Result, err error) reconcile.Step[*Widget] {
	return reconcile.Step[*Widget]{Name: name, Condition: name + "Ready", Run: r.fn(name, res, err)}
}

func (r *recorder) fn(name string, res ctrl.Result, err error) reconcile.StepFunc[*Widget] {
	return func(context.Context, *Widget) (ctrl.Result, error) {
		r.mu.Lock()
		r.ran = append(r.ran, name)
		r.mu.Unlock()
		return res, err
	}
}

func mustPipeline(t testing.TB, m *reconcile.Metrics, steps ...reconcile.Step[*Widget]) *reconcile.Pipeline[*Widget] {
	t.Helper()
	p, err := reconcile.NewPipeline(m, steps...)
	if err != nil {
		t.Fatalf("NewPipeline: %v", err)
	}
	return p
}

func after(d time.Duration) ctrl.Result { return ctrl.Result{RequeueAfter: d} }

func TestPipelineRun(t *testing.T) {
	zero := ctrl.Result{}
	tests := map[string]struct {
		steps      func(r *recorder) []reconcile.Step[*Widget]
		wantRan    []string
		wantResult ctrl.Result
		wantErr    []error // each must match with errors.Is
		wantStep   string  // StepError.Step of the returned error
	}{
		"all steps run when none stops the pass": {
			steps: func(r *recorder) []reconcile.Step[*Widget] {
				return []reconcile.Step[*Widget]{r.step("A", zero, nil), r.step("B", zero, nil), {Run: r.fn("prune", zero, nil)}}
			},
			wantRan: []string{"A", "B", "prune"},
		},
		"a requeue ends the pass": {
			steps: func(r *recorder) []reconcile.Step[*Widget] {
				return []reconcile.Step[*Widget]{r.step("A", zero, nil), r.step("B", after(10*time.Second), nil), r.step("C", zero, nil)}
			},
			wantRan:    []string{"A", "B"},
			wantResult: after(10 * time.Second),
		},
		"an error ends the pass, wrapped with the step name": {
			steps: func(r *recorder) []reconcile.Step[*Widget] {
				return []reconcile.Step[*Widget]{r.step("A", zero, errBoom), r.step("B", zero, nil)}
			},
			wantRan:  []string{"A"},
			wantErr:  []error{errBoom},
			wantStep: "A",
		},
		"an error wins over a result returned with it": {
			steps: func(r *recorder) []reconcile.Step[*Widget] {
				return []reconcile.Step[*Widget]{r.step("A", after(time.Second), errBoom), r.step("B", zero, nil)}
			},
			wantRan:  []string{"A"},
			wantErr:  []error{errBoom},
			wantStep: "A",
		},
		"an unnamed step's error is returned as is": {
			steps: func(r *recorder) []reconcile.Step[*Widget] {
				return []reconcile.Step[*Widget]{{Run: r.fn("prune", zero, errBoom)}, r.step("B", zero, nil)}
			},
			wantRan: []string{"prune"},
			wantErr: []error{errBoom},
		},
		"a sequential group runs every member past errors and requeues": {
			steps: func(r *recorder) []reconcile.Step[*Widget] {
				return []reconcile.Step[*Widget]{
					reconcile.Sequential("", r.step("A", after(time.Minute), nil), r.step("B", zero, errBoom),
						r.step("C", zero, errOther), r.step("D", zero, nil)),
					r.step("E", zero, nil),
				}
			},
			wantRan: []string{"A", "B", "C", "D"},
			wantErr: []error{errBoom, errOther},
		},
		"a sequential group's shortest requeue wins": {
			steps: func(r *recorder) []reconcile.Step[*Widget] {
				return []reconcile.Step[*Widget]{
					reconcile.Sequential("Keys", r.step("A", after(time.Minute), nil), r.step("B", zero, nil),
						r.step("C", after(15*time.Second), nil), r.step("D", after(30*time.Second), nil)),
					r.step("E", zero, nil),
				}
			},
			wantRan:    []string{"A", "B", "C", "D"},
			wantResult: after(15 * time.Second),
		},
		"a sequential group whose members all pass lets the pass go on": {
			steps: func(r *recorder) []reconcile.Step[*Widget] {
				return []reconcile.Step[*Widget]{
					reconcile.Sequential("", r.step("A", zero, nil), r.step("B", zero, nil)),
					r.step("C", zero, nil),
				}
			},
			wantRan: []string{"A", "B", "C"},
		},
		"a named group wraps its members' joined errors": {
			steps: func(r *recorder) []reconcile.Step[*Widget] {
				return []reconcile.Step[*Widget]{reconcile.Sequential("Keys", r.step("A", zero, errBoom), r.step("B", after(time.Second), nil))}
			},
			wantRan:  []string{"A", "B"},
			wantErr:  []error{errBoom},
			wantStep: "Keys",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &recorder{}
			p := mustPipeline(t, nil, tc.steps(r)...)
			res, err := p.Run(context.Background(), newWidget(1))
			if diff := cmp.Diff(tc.wantRan, r.ran); diff != "" {
				t.Errorf("steps run (-want +got):\n%s", diff)
			}
			if res != tc.wantResult {
				t.Errorf("result = %+v, want %+v", res, tc.wantResult)
			}
			if len(tc.wantErr) == 0 && err != nil {
				t.Fatalf("error = %v, want nil", err)
			}
			for _, want := range tc.wantErr {
				if !errors.Is(err, want) {
					t.Errorf("error %v does not wrap %v", err, want)
				}
			}
			var se *reconcile.StepError
			switch {
			case tc.wantStep != "" && !errors.As(err, &se):
				t.Errorf("error %v is not a *StepError", err)
			case tc.wantStep != "" && se.Step != tc.wantStep:
				t.Errorf("StepError.Step = %q, want %q", se.Step, tc.wantStep)
			case tc.wantStep == "" && len(tc.wantErr) == 1 && err.Error() != tc.wantErr[0].Error():
				t.Errorf("error = %q, want the step's error unwrapped", err)
			}
		})
	}
}

func TestPipelinePanicBecomesError(t *testing.T) {
	for name, step := range map[string]reconcile.Step[*Widget]{
		"named":   {Name: "Config", Condition: "ConfigReady", Run: func(context.Context, *Widget) (ctrl.Result, error) { panic("nil map") }},
		"unnamed": {Run: func(context.Context, *Widget) (ctrl.Result, error) { panic("nil map") }},
	} {
		t.Run(name, func(t *testing.T) {
			r := &recorder{}
			p := mustPipeline(t, nil, step, r.step("Next", ctrl.Result{}, nil))
			res, err := p.Run(context.Background(), newWidget(1))
			if !errors.Is(err, reconcile.ErrPanic) || !strings.Contains(err.Error(), "nil map") {
				t.Fatalf("error = %v, want ErrPanic with the panic value", err)
			}
			var se *reconcile.StepError
			if named := step.Name != ""; errors.As(err, &se) != named {
				t.Errorf("error %v: StepError present = %v, want %v", err, !named, named)
			}
			if !res.IsZero() || len(r.ran) != 0 {
				t.Errorf("result %+v, steps after the panic ran: %v", res, r.ran)
			}
		})
	}
}

func TestParallelGroup(t *testing.T) {
	ctx := context.Background()
	w := newWidget(3)
	w.Spec.Message = "original"
	reconcile.MarkTrue(w, "HPAReady", "HPAReady", "old")
	reconcile.MarkTrue(w, "VPAReady", "VPAReady", "to be removed")
	reconcile.MarkTrue(w, "Unrelated", "Kept", "untouched")
	oldLTT := w.Status.Conditions[0].LastTransitionTime

	// Both members wait for each other: run one after the other they would never return.
	started := map[string]chan struct{}{"HPA": make(chan struct{}), "NetworkPolicy": make(chan struct{})}
	rendezvous := func(ctx context.Context, me, other string) error {
		close(started[me])
		select {
		case <-started[other]:
			return nil
		case <-time.After(30 * time.Second):
			return errors.New(me + " never saw " + other + " start: members are not concurrent")
		}
	}
	var seen sync.Map
	steps := []reconcile.Step[*Widget]{reconcile.Parallel("Extras",
		reconcile.Step[*Widget]{Name: "HPA", Condition: "HPAReady", Run: func(ctx context.Context, obj *Widget) (ctrl.Result, error) {
			seen.Store("HPA", obj)
			if err := rendezvous(ctx, "HPA", "NetworkPolicy"); err != nil {
				return ctrl.Result{}, err
			}
			obj.Spec.Message = "changed by HPA"
			reconcile.MarkFalse(obj, "HPAReady", "HPAError", "quota exceeded")
			reconcile.MarkFalse(obj, "Unrelated", "Stolen", "not owned by HPA")
			return ctrl.Result{}, errBoom
		}},
		reconcile.Step[*Widget]{Name: "NetworkPolicy", Condition: "NetworkPolicyReady", Run: func(ctx context.Context, obj *Widget) (ctrl.Result, error) {
			seen.Store("NetworkPolicy", obj)
			if err := rendezvous(ctx, "NetworkPolicy", "HPA"); err != nil {
				return ctrl.Result{}, err
			}
			reconcile.MarkTrue(obj, "NetworkPolicyReady", "NetworkPolicyReady", "applied")
			return after(time.Second), nil
		}},
		reconcile.Step[*Widget]{Name: "VPA", Condition: "VPAReady", Run: func(_ context.Context, obj *Widget) (ctrl.Result, error) {
			seen.Store("VPA", obj)
			if obj.Spec.Message != "original" {
				return ctrl.Result{}, errors.New("VPA saw another member's change")
			}
			reconcile.MarkTrue(obj, "HPAReady", "Stolen", "not owned by VPA")
			*obj.Conditions() = slicesDeleteType(*obj.Conditions(), "VPAReady")
			return after(time.Minute), nil
		}},
	)}
	p := mustPipeline(t, nil, steps...)
	res, err := p.Run(ctx, w)

	if !errors.Is(err, errBoom) || !res.IsZero() {
		t.Fatalf("Run = %+v, %v; want the HPA member's error and no result", res, err)
	}
	if strings.Contains(err.Error(), "VPA") || strings.Contains(err.Error(), "NetworkPolicy saw") {
		t.Errorf("error %q names members that did not fail", err)
	}
	// Each member gets a copy of its own: not the original, and not one another's.
	copyOf := map[*Widget]string{}
	for _, name := range []string{"HPA", "NetworkPolicy", "VPA"} {
		v, _ := seen.Load(name)
		obj, _ := v.(*Widget)
		switch {
		case obj == nil:
			t.Errorf("member %s did not run", name)
		case obj == w:
			t.Errorf("member %s ran on the original object, want its own copy", name)
		case copyOf[obj] != "":
			t.Errorf("members %s and %s ran on the same copy, want one copy each", copyOf[obj], name)
		default:
			copyOf[obj] = name
		}
	}
	if w.Spec.Message != "original" {
		t.Errorf("spec.message = %q: a member's change outside its condition leaked into the object", w.Spec.Message)
	}
	want := []metav1.Condition{
		{Type: "HPAReady", Status: metav1.ConditionFalse, Reason: "HPAError", Message: "quota exceeded", ObservedGeneration: 3},
		{Type: "Unrelated", Status: metav1.ConditionTrue, Reason: "Kept", Message: "untouched", ObservedGeneration: 3},
		{Type: "NetworkPolicyReady", Status: metav1.ConditionTrue, Reason: "NetworkPolicyReady", Message: "applied", ObservedGeneration: 3},
	}
	if diff := cmp.Diff(want, w.Status.Conditions, ignoreLTT); diff != "" {
		t.Errorf("merged conditions (-want +got):\n%s", diff)
	}
	if got := w.Status.Conditions[0].LastTransitionTime; got.Equal(&oldLTT) {
		t.Errorf("HPAReady flipped to False but kept its lastTransitionTime %v", got)
	}
}

func TestParallelGroupShortestRequeue(t *testing.T) {
	r := &recorder{}
	p := mustPipeline(t, nil, reconcile.Parallel("",
		reconcile.Step[*Widget]{Name: "A", Condition: "AReady", Run: r.fn("A", after(30*time.Second), nil)},
		reconcile.Step[*Widget]{Name: "B", Condition: "BReady", Run: r.fn("B", after(10*time.Second), nil)},
		reconcile.Step[*Widget]{Condition: "CReady", Run: r.fn("C", ctrl.Result{}, nil)},
	), r.step("After", ctrl.Result{}, nil))
	res, err := p.Run(context.Background(), newWidget(1))
	if err != nil || res != after(10*time.Second) {
		t.Fatalf("Run = %+v, %v; want RequeueAfter 10s", res, err)
	}
	if len(r.ran) != 3 {
		t.Errorf("ran %v, want the three members and not the step after the group", r.ran)
	}
}

func TestParallelMemberPanic(t *testing.T) {
	w := newWidget(1)
	p := mustPipeline(t, nil, reconcile.Parallel("",
		reconcile.Step[*Widget]{Name: "A", Condition: "AReady", Run: func(context.Context, *Widget) (ctrl.Result, error) { panic("in a goroutine") }},
		reconcile.Step[*Widget]{Name: "B", Condition: "BReady", Run: func(_ context.Context, obj *Widget) (ctrl.Result, error) {
			reconcile.MarkTrue(obj, "BReady", "Done", "")
			return ctrl.Result{}, nil
		}},
	))
	_, err := p.Run(context.Background(), w)
	if !errors.Is(err, reconcile.ErrPanic) {
		t.Fatalf("error = %v, want ErrPanic", err)
	}
	if !reconcile.IsTrue(w, "BReady") {
		t.Errorf("BReady not merged back after a sibling panicked: %+v", w.Status.Conditions)
	}
}

func TestNewPipelineRefusesInvalidTables(t *testing.T) {
	ok := func(context.Context, *Widget) (ctrl.Result, error) { return ctrl.Result{}, nil }
	tests := map[string]struct {
		steps []reconcile.Step[*Widget]
		want  string
	}{
		"nil Run": {
			steps: []reconcile.Step[*Widget]{{Name: "Config"}},
			want:  `step 0 ("Config"): Run is nil`,
		},
		"duplicate name": {
			steps: []reconcile.Step[*Widget]{{Name: "Config", Run: ok}, reconcile.Sequential("", reconcile.Step[*Widget]{Name: "Config", Run: ok})},
			want:  `step 1 member 0 ("Config"): duplicate step name`,
		},
		"empty group": {
			steps: []reconcile.Step[*Widget]{reconcile.Sequential[*Widget]("Keys")},
			want:  `step 0 ("Keys"): Sequential group without members`,
		},
		"parallel member without condition": {
			steps: []reconcile.Step[*Widget]{reconcile.Parallel("", reconcile.Step[*Widget]{Name: "HPA", Run: ok})},
			want:  "step 0 member 0: a Parallel member must own a condition type",
		},
		"parallel members sharing a condition": {
			steps: []reconcile.Step[*Widget]{reconcile.Parallel("",
				reconcile.Step[*Widget]{Name: "A", Condition: "X", Run: ok}, reconcile.Step[*Widget]{Name: "B", Condition: "X", Run: ok})},
			want: `step 0 member 1: condition type "X" is owned by another member`,
		},
		"group inside a parallel group": {
			steps: []reconcile.Step[*Widget]{reconcile.Parallel("", reconcile.Sequential("", reconcile.Step[*Widget]{Run: ok}))},
			want:  "must be a single step, not a Sequential group",
		},
		"invalid UTF-8 name": {
			steps: []reconcile.Step[*Widget]{{Name: "Config\xff", Run: ok}},
			want:  "not a valid label value",
		},
	}
	m := newTestMetrics(t, "refuse")
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := reconcile.NewPipeline(m, tc.steps...)
			if !errors.Is(err, reconcile.ErrInvalidPipeline) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want ErrInvalidPipeline containing %q", err, tc.want)
			}
		})
	}
}

func TestPipelineConditions(t *testing.T) {
	ok := func(context.Context, *Widget) (ctrl.Result, error) { return ctrl.Result{}, nil }
	p := mustPipeline(t, nil,
		reconcile.Step[*Widget]{Name: "Secrets", Condition: "SecretsReady", Run: ok},
		reconcile.Step[*Widget]{Name: "Config", Condition: "ConfigReady", Run: ok},
		reconcile.Step[*Widget]{Run: ok},
		reconcile.Parallel("", reconcile.Step[*Widget]{Condition: "HPAReady", Run: ok}, reconcile.Step[*Widget]{Condition: "VPAReady", Run: ok}),
		reconcile.Step[*Widget]{Name: "ConfigAgain", Condition: "ConfigReady", Run: ok},
	)
	want := []string{"SecretsReady", "ConfigReady", "HPAReady", "VPAReady"}
	if diff := cmp.Diff(want, p.Conditions()); diff != "" {
		t.Errorf("Conditions (-want +got):\n%s", diff)
	}
}

func TestShortest(t *testing.T) {
	tests := map[string]struct{ a, b, want ctrl.Result }{
		"both zero":                {},
		"zero loses":               {a: ctrl.Result{}, b: after(time.Second), want: after(time.Second)},
		"zero loses (other side)":  {a: after(time.Second), b: ctrl.Result{}, want: after(time.Second)},
		"shorter delay wins":       {a: after(time.Minute), b: after(time.Second), want: after(time.Second)},
		"tie keeps the first":      {a: after(time.Second), b: after(time.Second), want: after(time.Second)},
		"immediate requeue wins":   {a: after(time.Second), b: ctrl.Result{Requeue: true}, want: ctrl.Result{Requeue: true}}, //nolint:staticcheck // the deprecated field is still honoured
		"requeue beats no requeue": {a: ctrl.Result{Priority: new(1)}, b: after(time.Hour), want: after(time.Hour)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := reconcile.Shortest(tc.a, tc.b); !cmp.Equal(got, tc.want) {
				t.Errorf("Shortest(%+v, %+v) = %+v, want %+v", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

func slicesDeleteType(conds []metav1.Condition, t string) []metav1.Condition {
	out := conds[:0]
	for _, c := range conds {
		if c.Type != t {
			out = append(out, c)
		}
	}
	return out
}
