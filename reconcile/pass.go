package reconcile

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// PassOptions configure [RunPass].
type PassOptions struct {
	// ReadyCondition is the aggregate condition type re-aggregated from SubConditions
	// after every pass (see [AggregateReady]). Aggregation is off when it is empty or
	// SubConditions is empty.
	ReadyCondition string
	// SubConditions are the conditions ReadyCondition aggregates, in the order their
	// blocking reasons are reported (usually [Pipeline.Conditions]).
	SubConditions []string
	// ConflictBackoff bounds the refetch-and-reapply attempts after a 409 Conflict on the
	// status write. A zero value means retry.DefaultBackoff.
	ConflictBackoff wait.Backoff
}

// DefaultPassOptions returns options that aggregate [ConditionReady] from
// subConditions and retry a conflicting status write with retry.DefaultBackoff (four
// attempts, 10 ms to 250 ms apart, about 0.3 s in all, so that a cached client has time
// to see the newer object).
func DefaultPassOptions(subConditions ...string) PassOptions {
	return PassOptions{ReadyCondition: ConditionReady, SubConditions: subConditions, ConflictBackoff: retry.DefaultBackoff}
}

// RunPass runs one reconcile pass with the status persisted on every exit path. Call it
// from Reconcile with an empty object of the custom resource's type:
//
//	return reconcile.RunPass(ctx, r.Client, req.NamespacedName, &v1.Horizon{}, r.passOptions, r.pass)
//
// It reads the object at key into obj (a missing object ends the pass with a zero
// result and no error: it was deleted), snapshots its status and calls pass, which holds
// the whole pass: the preamble (finalizers, the deletion path, target-cluster
// resolution) and [Pipeline.Run]. Whatever pass returns — a zero result, a requeue, an
// error, or a panic, which is recovered into an error wrapping [ErrPanic] — RunPass
// then re-aggregates the Ready condition (see [PassOptions]) and writes the status
// subresource when, and only when, it differs from the snapshot; an unchanged pass makes
// no write. An object that is gone by then (its last finalizer was removed) is not
// written; an object whose type has no status subresource (the write answers 404 while
// the object exists) is an error wrapping [ErrStatusNotServed], never a silent drop.
//
// The write is an Update of the status subresource, guarded by the object's
// resourceVersion. On a 409 Conflict (someone else wrote the object since it was read)
// RunPass re-reads the object and reapplies this pass's own status changes to it — each
// condition type the pass set, changed or removed, and each other top-level status
// field it changed — re-aggregates Ready there and writes again, within
// ConflictBackoff. Conditions that others wrote meanwhile and that this pass did not
// touch are kept.
//
// RunPass returns pass's result or error, never both (the error wins). When the status
// write fails, its error is returned joined to pass's error, and a result is dropped:
// controller-runtime then retries with backoff. obj holds the pass's view of the object
// afterwards, not necessarily what was stored after a conflict.
func RunPass[T Object](ctx context.Context, c client.Client, key client.ObjectKey, obj T, opts PassOptions, pass StepFunc[T]) (ctrl.Result, error) {
	if err := c.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get %s %s: %w", kindOf(c, obj), key, err)
	}
	before, ok := obj.DeepCopyObject().(T)
	if !ok {
		return ctrl.Result{}, fmt.Errorf("DeepCopyObject of %T returned %T", obj, obj.DeepCopyObject())
	}
	res, err := guard(ctx, obj, pass)
	if serr := persistStatus(ctx, c, key, before, obj, opts); serr != nil {
		if err != nil {
			return ctrl.Result{}, errors.Join(err, serr)
		}
		return ctrl.Result{}, serr
	}
	return res, err
}

// guard calls pass, recovering a panic into an error and dropping a result returned
// with an error.
func guard[T Object](ctx context.Context, obj T, pass StepFunc[T]) (res ctrl.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = ctrl.Result{}, fmt.Errorf("reconcile pass: %w: %v", ErrPanic, r)
			log.FromContext(ctx).Error(err, "reconcile pass panicked; recovered", "stack", string(debug.Stack()))
		}
		if err != nil {
			res = ctrl.Result{}
		}
	}()
	return pass(ctx, obj)
}

// persistStatus writes after's status when it differs from before's, resolving
// conflicts by reapplying the pass's changes to a fresh copy.
func persistStatus[T Object](ctx context.Context, c client.Client, key client.ObjectKey, before, after T, opts PassOptions) error {
	aggregate := opts.ReadyCondition != "" && len(opts.SubConditions) > 0
	if aggregate {
		AggregateReady(after, opts.ReadyCondition, opts.SubConditions)
	}
	bs, err := statusOf(before)
	if err != nil {
		return err
	}
	as, err := statusOf(after)
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(bs, as) {
		return nil
	}
	err = c.Status().Update(ctx, after)
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return statusNotFound(ctx, c, key, after, err)
	case !apierrors.IsConflict(err):
		return fmt.Errorf("write status of %s %s: %w", kindOf(c, after), key, err)
	}

	ready := ""
	if aggregate {
		ready = opts.ReadyCondition
	}
	delta := newStatusDelta(before, after, bs, as, ready)
	backoff := opts.ConflictBackoff
	if backoff.Steps == 0 {
		backoff = retry.DefaultBackoff
	}
	err = retry.RetryOnConflict(backoff, func() error {
		fresh := newObject(after)
		if err := c.Get(ctx, key, fresh); err != nil {
			return err
		}
		fs, err := statusOf(fresh)
		if err != nil {
			return err
		}
		if fresh, err = applyDelta(delta, fresh); err != nil {
			return err
		}
		if aggregate {
			AggregateReady(fresh, opts.ReadyCondition, opts.SubConditions)
		}
		ns, err := statusOf(fresh)
		if err != nil {
			return err
		}
		if equality.Semantic.DeepEqual(fs, ns) {
			return nil
		}
		return c.Status().Update(ctx, fresh)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("write status of %s %s after a conflict: %w", kindOf(c, after), key, err)
	}
	return nil
}

// statusNotFound tells the two 404s of a status write apart: the object is gone (its
// last finalizer was removed during the pass), which needs no write, or the object is
// there and its type serves no status subresource, which would drop every status write
// of every pass and is reported as [ErrStatusNotServed].
func statusNotFound(ctx context.Context, c client.Client, key client.ObjectKey, obj Object, writeErr error) error {
	err := c.Get(ctx, key, newObject(obj))
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("write status of %s %s: %w; get after the 404: %w", kindOf(c, obj), key, writeErr, err)
	}
	return fmt.Errorf("write status of %s %s: %w (enable the status subresource of its CRD): %w",
		kindOf(c, obj), key, ErrStatusNotServed, writeErr)
}

// statusOf returns the unstructured status of obj (nil when it has none).
func statusOf(obj Object) (any, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %T to unstructured: %w", obj, err)
	}
	return u["status"], nil
}

// newObject returns a new zero value of obj's pointed-to type.
func newObject[T Object](obj T) T {
	return reflect.New(reflect.TypeOf(obj).Elem()).Interface().(T)
}

// kindOf names obj's kind for errors.
func kindOf(c client.Client, obj client.Object) string {
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}
