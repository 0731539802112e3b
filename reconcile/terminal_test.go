package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

// crTerminal is controller-runtime's own test: the controller drops (does not requeue)
// a request whose error satisfies it.
func crTerminal(err error) bool { return errors.Is(err, crreconcile.TerminalError(nil)) }

var errTransient = errors.New("transient: connection reset")

// TestJoinErrorsTerminalOnlyWhenEveryPartIs: a join is terminal for controller-runtime
// only when each of its parts is; every part stays visible to errors.Is and errors.As.
func TestJoinErrorsTerminalOnlyWhenEveryPartIs(t *testing.T) {
	termBoom := crreconcile.TerminalError(errBoom)
	termOther := crreconcile.TerminalError(errOther)
	stepTerm := &reconcile.StepError{Step: "Config", Err: fmt.Errorf("render: %w", termBoom)}
	cases := map[string]struct {
		errs     []error
		terminal bool
		is       []error
		nilJoin  bool
	}{
		"no error":                          {errs: []error{nil, nil}, nilJoin: true},
		"one terminal":                      {errs: []error{termBoom, nil}, terminal: true, is: []error{errBoom}},
		"one transient":                     {errs: []error{errTransient}, is: []error{errTransient}},
		"terminal and transient":            {errs: []error{termBoom, errTransient}, is: []error{errBoom, errTransient}},
		"transient and wrapped terminal":    {errs: []error{errTransient, stepTerm}, is: []error{errBoom, errTransient}},
		"two terminals":                     {errs: []error{termBoom, termOther}, terminal: true, is: []error{errBoom, errOther}},
		"terminal join and transient":       {errs: []error{errors.Join(termBoom, termOther), errTransient}, is: []error{errBoom, errOther, errTransient}},
		"mixed join nested in a terminal":   {errs: []error{reconcile.JoinErrors(termBoom, errTransient), termOther}, is: []error{errBoom, errTransient, errOther}},
		"terminal join nested in terminals": {errs: []error{reconcile.JoinErrors(termBoom, termOther), termOther}, terminal: true, is: []error{errBoom, errOther}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := reconcile.JoinErrors(tc.errs...)
			if (err == nil) != tc.nilJoin {
				t.Fatalf("JoinErrors = %v, want nil: %v", err, tc.nilJoin)
			}
			if got := crTerminal(err); got != tc.terminal {
				t.Errorf("controller-runtime sees terminal = %v, want %v (error %q)", got, tc.terminal, err)
			}
			if got := reconcile.IsTerminal(err); got != tc.terminal {
				t.Errorf("IsTerminal = %v, want %v", got, tc.terminal)
			}
			for _, target := range tc.is {
				if !errors.Is(err, target) {
					t.Errorf("errors.Is(%q, %q) = false", err, target)
				}
			}
			for _, part := range tc.errs {
				if part != nil && !strings.Contains(err.Error(), part.Error()) {
					t.Errorf("message %q lacks the part %q", err, part)
				}
			}
		})
	}
	// errors.As still finds a part's typed error behind a shielded terminal part.
	var se *reconcile.StepError
	if err := reconcile.JoinErrors(errTransient, stepTerm); !errors.As(err, &se) || se.Step != "Config" {
		t.Errorf("errors.As(*StepError) on a mixed join = %v, %+v", errors.As(err, &se), se)
	}
	if reconcile.IsTerminal(nil) || reconcile.IsTerminal(errTransient) || !reconcile.IsTerminal(termBoom) {
		t.Error("IsTerminal disagrees with controller-runtime on a single error")
	}
}

// TestGroupErrorsTerminalOnlyWhenEveryMemberIs: one member's transient error joined to
// another member's terminal error must stay retryable, in Parallel and Sequential
// groups alike.
func TestGroupErrorsTerminalOnlyWhenEveryMemberIs(t *testing.T) {
	type group func(name string, members ...reconcile.Step[*Widget]) reconcile.Step[*Widget]
	groups := map[string]group{"Parallel": reconcile.Parallel[*Widget], "Sequential": reconcile.Sequential[*Widget]}
	fail := func(err error) reconcile.StepFunc[*Widget] {
		return func(context.Context, *Widget) (ctrl.Result, error) { return ctrl.Result{}, err }
	}
	for gname, g := range groups {
		for name, tc := range map[string]struct {
			a, b     error
			terminal bool
		}{
			"terminal and transient": {a: crreconcile.TerminalError(errBoom), b: errTransient},
			"transient and terminal": {a: errTransient, b: crreconcile.TerminalError(errBoom)},
			"both terminal":          {a: crreconcile.TerminalError(errBoom), b: crreconcile.TerminalError(errOther), terminal: true},
		} {
			t.Run(gname+"/"+name, func(t *testing.T) {
				p := mustPipeline(t, nil, g("Extras",
					reconcile.Step[*Widget]{Name: "A", Condition: "AReady", Run: fail(tc.a)},
					reconcile.Step[*Widget]{Name: "B", Condition: "BReady", Run: fail(tc.b)},
				))
				_, err := p.Run(context.Background(), newWidget(1))
				if err == nil {
					t.Fatal("Run = nil error")
				}
				if got := crTerminal(err); got != tc.terminal {
					t.Errorf("controller-runtime sees terminal = %v, want %v: %v", got, tc.terminal, err)
				}
				if !errors.Is(err, tc.a) && !errors.Is(err, errors.Unwrap(tc.a)) {
					t.Errorf("error %q lost member A's error", err)
				}
			})
		}
	}
}

// TestRunPassTerminalStepErrorWithFailedStatusWrite: a terminal step error joined to a
// transient failure of the status write is retried (the status must still be written);
// with the status written, the step's error stays terminal.
func TestRunPassTerminalStepErrorWithFailedStatusWrite(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		writeErr error
		terminal bool
	}{
		"status write fails": {writeErr: apierrors.NewServiceUnavailable("etcd leader changed")},
		"status written":     {terminal: true},
	} {
		t.Run(name, func(t *testing.T) {
			key := createWidget(t, env.Namespace(t))
			c := interceptor.NewClient(withWatch(t), interceptor.Funcs{
				SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					if tc.writeErr != nil {
						return tc.writeErr
					}
					return c.SubResource(sub).Update(ctx, obj, opts...)
				},
			})
			r := newWidgetReconciler(t, c)
			r.config = func(w *Widget) (ctrl.Result, error) {
				reconcile.MarkFalse(w, "ConfigReady", "ConfigError", "extraConfig is not valid")
				return ctrl.Result{}, crreconcile.TerminalError(errConfig)
			}
			_, err := r.Reconcile(ctx, key)
			if !errors.Is(err, errConfig) {
				t.Fatalf("error = %v, want the step's", err)
			}
			if got := crTerminal(err); got != tc.terminal {
				t.Errorf("controller-runtime sees terminal = %v, want %v: %v", got, tc.terminal, err)
			}
			if tc.writeErr != nil && !apierrors.IsServiceUnavailable(err) {
				t.Errorf("error = %v, want the status write's as well", err)
			}
		})
	}
}

// TestControllerRuntimeRetriesTerminalJoinedToTransient runs RunPass under a real
// controller-runtime controller: the step's error is terminal, the first status write
// fails with a 503. controller-runtime must retry the request (the status was not
// written); the second pass writes the status, and its terminal error ends the retries.
func TestControllerRuntimeRetriesTerminalJoinedToTransient(t *testing.T) {
	ns := env.Namespace(t)
	var statusWrites atomic.Int32
	passes := make(chan error, 16)
	startManager(t, ns, nil, func(mgr manager.Manager) error {
		c := interceptor.NewClient(noWatchClient{mgr.GetClient()}, interceptor.Funcs{
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				if statusWrites.Add(1) == 1 {
					return apierrors.NewServiceUnavailable("etcd leader changed")
				}
				return c.SubResource(sub).Update(ctx, obj, opts...)
			},
		})
		r := newWidgetReconciler(t, c)
		r.config = func(w *Widget) (ctrl.Result, error) {
			reconcile.MarkFalse(w, "ConfigReady", "ConfigError", "extraConfig is not valid")
			return ctrl.Result{}, crreconcile.TerminalError(errConfig)
		}
		return ctrl.NewControllerManagedBy(mgr).For(&Widget{}).Named("terminal-join-" + ns).
			WithEventFilter(reconcile.IgnoreStatusWrites()).
			Complete(crreconcile.Func(func(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
				res, err := r.Reconcile(ctx, req.NamespacedName)
				passes <- err
				return res, err
			}))
	})
	key := createWidget(t, ns)
	for pass := 1; pass <= 2; pass++ {
		select {
		case err := <-passes:
			if pass == 1 && (crTerminal(err) || !errors.Is(err, errConfig)) {
				t.Errorf("first pass error %v: want the step's error, not terminal", err)
			}
			if pass == 2 && !crTerminal(err) {
				t.Errorf("second pass error %v: want it terminal", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("controller-runtime did not retry: %d passes ran, want 2", pass-1)
		}
	}
	w := getWidget(t, key)
	if c := meta.FindStatusCondition(w.Status.Conditions, "ConfigReady"); c == nil || c.Reason != "ConfigError" {
		t.Errorf("ConfigReady = %+v, want the retry to have written ConfigError", c)
	}
}
