package testenv_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// setupRecorder is a SetupReconciler that records the manager it was set up on.
type setupRecorder struct {
	resolver *multicluster.ClusterResolver
	mgr      mcmanager.Manager
}

func (r *setupRecorder) SetupWithManager(_ context.Context, mgr mcmanager.Manager) error {
	r.mgr = mgr
	return nil
}

// StartReconciler builds the reconciler on the running operator's resolver and sets it
// up on its manager before it returns.
func TestStartReconciler(t *testing.T) {
	opts := testenv.OperatorOptions{}
	opts.FieldManager = "setup-recorder"
	rec, op := testenv.StartReconciler(t, env, opts, func(resolver *multicluster.ClusterResolver) (*setupRecorder, error) {
		return &setupRecorder{resolver: resolver}, nil
	})
	if rec == nil || rec.resolver != op.Resolver || rec.mgr == nil {
		t.Fatalf("reconciler %+v, operator resolver %p: want one built on the operator's resolver and set up", rec, op.Resolver)
	}
}

// StepResolver's management cluster and StepTarget write under the field manager they
// are given; StepReconciler hands newReconciler such a resolver.
func TestStepResolverAndTarget(t *testing.T) {
	got := testenv.StepReconciler(t, env, "step-manager", func(resolver *multicluster.ClusterResolver) (*multicluster.ClusterResolver, error) {
		return resolver, nil
	})
	for name, c := range map[string]any{"StepResolver": got.Local().Client, "StepTarget": testenv.StepTarget(env.Client, "step-manager").Client} {
		a, ok := c.(*apply.Applier)
		if !ok || a.FieldManager() != "step-manager" {
			t.Errorf("%s client = %T, want an Applier under step-manager", name, c)
		}
	}
}

// Eventually returns once cond holds, asking it until then; an error does not end the
// wait, and a condition that never holds fails the test with its last error.
func TestEventually(t *testing.T) {
	var calls atomic.Int32
	testenv.Eventually(t, 5*time.Second, "the third call", func(context.Context) (bool, error) {
		if calls.Add(1) < 3 {
			return false, errors.New("not yet")
		}
		return true, nil
	})
	if n := calls.Load(); n != 3 {
		t.Errorf("cond called %d times, want 3", n)
	}
	rec := &eventuallyRecorder{TB: t}
	func() {
		defer func() { _ = recover() }()
		testenv.Eventually(rec, 300*time.Millisecond, "never", func(context.Context) (bool, error) { return false, errors.New("still not") })
	}()
	if rec.msg != "never: not within 300ms (last error: still not)" {
		t.Errorf("failure %q, want the what, the timeout and the last error", rec.msg)
	}
}

// eventuallyRecorder is a testing.TB whose Fatalf records the message and unwinds.
type eventuallyRecorder struct {
	testing.TB
	msg string
}

func (r *eventuallyRecorder) Helper() {}

func (r *eventuallyRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	panic(r)
}
