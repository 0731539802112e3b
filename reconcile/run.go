package reconcile

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// call runs the node on obj: instrumented when named, panics recovered, and never a
// result together with an error.
func (n *node[T]) call(ctx context.Context, obj T) (res ctrl.Result, err error) {
	var start time.Time
	if n.observer != nil {
		start = time.Now()
	}
	defer func() {
		if r := recover(); r != nil {
			res, err = ctrl.Result{}, n.panicked(ctx, r)
		}
		if err != nil && !res.IsZero() {
			log.FromContext(ctx).V(1).Info("step returned a result together with an error; the error wins, the result is dropped",
				"step", n.name, "result", res)
			res = ctrl.Result{}
		}
		if n.observer != nil {
			n.observer.Observe(time.Since(start).Seconds())
			if err != nil {
				n.errors.Inc()
			}
		}
	}()
	switch n.kind {
	case sequential:
		res, err = n.runSequential(ctx, obj)
	case parallel:
		res, err = n.runParallel(ctx, obj)
	default:
		res, err = n.run(ctx, obj)
	}
	if err != nil && n.name != "" {
		err = &StepError{Step: n.name, Err: err}
	}
	return res, err
}

// panicked turns a recovered panic value into the step's error and logs the stack.
func (n *node[T]) panicked(ctx context.Context, r any) error {
	err := fmt.Errorf("%w: %v", ErrPanic, r)
	log.FromContext(ctx).Error(err, "step panicked; recovered", "step", n.name, "stack", string(debug.Stack()))
	if n.name != "" {
		return &StepError{Step: n.name, Err: err}
	}
	return err
}

func (n *node[T]) runSequential(ctx context.Context, obj T) (ctrl.Result, error) {
	var (
		res  ctrl.Result
		errs []error
	)
	for _, m := range n.members {
		r, err := m.call(ctx, obj)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		res = Shortest(res, r)
	}
	return combine(res, errs)
}

func (n *node[T]) runParallel(ctx context.Context, obj T) (ctrl.Result, error) {
	type outcome struct {
		obj T
		res ctrl.Result
		err error
	}
	out := make([]outcome, len(n.members))
	for i := range n.members {
		cp, ok := obj.DeepCopyObject().(T)
		if !ok {
			return ctrl.Result{}, fmt.Errorf("parallel group: DeepCopyObject of %T returned %T", obj, obj.DeepCopyObject())
		}
		out[i].obj = cp
	}
	var wg sync.WaitGroup
	for i, m := range n.members {
		wg.Go(func() { out[i].res, out[i].err = m.call(ctx, out[i].obj) })
	}
	wg.Wait()

	var (
		res  ctrl.Result
		errs []error
	)
	conds := obj.Conditions()
	for i, m := range n.members {
		if c := meta.FindStatusCondition(*out[i].obj.Conditions(), m.condition); c != nil {
			meta.SetStatusCondition(conds, *c)
		} else {
			meta.RemoveStatusCondition(conds, m.condition)
		}
		if out[i].err != nil {
			errs = append(errs, out[i].err)
			continue
		}
		res = Shortest(res, out[i].res)
	}
	return combine(res, errs)
}

// combine returns the joined errors (result dropped) or, without errors, res. The join
// is terminal only when every member's error is (see [JoinErrors]).
func combine(res ctrl.Result, errs []error) (ctrl.Result, error) {
	if len(errs) == 0 {
		return res, nil
	}
	return ctrl.Result{}, JoinErrors(errs...)
}

// Shortest returns whichever of a and b requeues sooner: a zero result loses to any
// other, a requeue after d loses to one after a shorter d, and the deprecated
// Requeue: true without RequeueAfter (an immediate, rate-limited requeue) wins over any
// delay. On a tie a is returned. Groups combine their members' results with it.
func Shortest(a, b ctrl.Result) ctrl.Result {
	da, oka := requeueDelay(a)
	db, okb := requeueDelay(b)
	switch {
	case a.IsZero():
		return b
	case b.IsZero(), !okb:
		return a
	case !oka, db < da:
		return b
	default:
		return a
	}
}

// requeueDelay returns after how long r requeues, and whether it requeues at all.
func requeueDelay(r ctrl.Result) (time.Duration, bool) {
	switch {
	case r.RequeueAfter > 0:
		return r.RequeueAfter, true
	case r.Requeue: //nolint:staticcheck // honour the deprecated field for steps that still set it
		return 0, true
	default:
		return 0, false
	}
}
