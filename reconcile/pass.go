package reconcile

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"slices"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/apply"
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
	// StatusWriteTimeout bounds the status write at the end of the pass (the write, its
	// conflict retries and the read that confirms a 404), run on a context without the
	// pass's cancellation (context.WithoutCancel keeps its values). Zero means
	// [StatusWriteTimeout].
	StatusWriteTimeout time.Duration
	// APIReader reads the object past any cache when the status write needs a fresh
	// copy: the re-read after a 409 Conflict and the check of a 404. Pass
	// mgr.GetAPIReader() with the manager's cached client ("Under faults, races and
	// shutdown" in the package documentation). Nil: the client, the 404 confirmed by an
	// unstructured read.
	APIReader client.Reader
	// LogWrites logs, once the pass is done, every write the SDK's helpers made with
	// its context (apply.WithWrites) as "Kind namespace/name action" with the changed
	// field paths: changes at info level, unchanged and skipped ones at V(1). A
	// collection the context given to RunPass carries still gets them.
	LogWrites bool
}

// StatusWriteTimeout bounds the status write at the end of a pass when
// [PassOptions].StatusWriteTimeout is zero: 10 s for the write, its conflict retries and
// the read that confirms a 404.
const StatusWriteTimeout = 10 * time.Second

// StaleStatusRequeue is the requeue [RunPass] returns, when the pass returned neither an
// error nor a sooner requeue, after its status write's conflict retry kept another
// writer's value of a condition or field this pass changed: 1 s. The pass decided that
// change from an object older than the stored one (a cache lagging behind, or a write
// between its read and its own), so it runs again to decide from the stored object.
const StaleStatusRequeue = time.Second

// ErrStatusSuperseded is joined ([JoinErrors]) to a terminal error of a pass whose
// status write kept another writer's newer value over a change of the pass: the join is
// not terminal, so controller-runtime runs the pass again and it decides from the stored
// object, where a terminal error alone would never be retried.
var ErrStatusSuperseded = errors.New("the stored status changed since this pass read it; the pass runs again")

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
//	return reconcile.RunPass(ctx, r.Client, req.NamespacedName, &v1.Memo{}, r.passOptions, r.pass)
//
// It reads the object at key into obj (a missing one ends the pass: zero result, no
// error), runs pass, re-aggregates Ready and writes the status subresource when, and only
// when, it changed, repairing conditions the API server would refuse (the package
// documentation, "Status on every exit path"). It returns pass's result or error, never
// both; a failed status write is joined to pass's error with [JoinErrors]. When the
// write's conflict retry kept another writer's newer value over a change of this pass,
// a pass that returned no error requeues after [StaleStatusRequeue] at the latest (its
// own requeue when sooner); an error is returned alone, and its retry runs the pass
// again anyway, a terminal one joined to [ErrStatusSuperseded] so that it is retried.
func RunPass[T Object](ctx context.Context, c client.Client, key client.ObjectKey, obj T, opts PassOptions, pass StepFunc[T]) (ctrl.Result, error) {
	if opts.LogWrites {
		outer := ctx
		var writes *apply.Writes
		ctx, writes = apply.WithWrites(ctx)
		defer logWrites(outer, writes)
	}
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
	timeout := opts.StatusWriteTimeout
	if timeout <= 0 {
		timeout = StatusWriteTimeout
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	stale, serr := persistStatus(wctx, c, key, before, obj, opts)
	if serr != nil {
		return ctrl.Result{}, JoinErrors(err, serr)
	}
	switch {
	case stale && err == nil:
		res = Shortest(res, ctrl.Result{RequeueAfter: StaleStatusRequeue})
	case stale && IsTerminal(err):
		err = JoinErrors(err, ErrStatusSuperseded)
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

// persistStatus writes after's status when it differs from before's. On a conflict it
// merges the pass's changes into a fresh copy three ways (see MergeStatus); stale reports
// that the merge kept another writer's newer value over one of them.
func persistStatus[T Object](ctx context.Context, c client.Client, key client.ObjectKey, before, after T, opts PassOptions) (stale bool, err error) {
	aggregate := opts.ReadyCondition != "" && len(opts.SubConditions) > 0
	if aggregate {
		AggregateReady(after, opts.ReadyCondition, opts.SubConditions)
	}
	repairConditions(ctx, after)
	bs, err := statusOf(before)
	if err != nil {
		return false, err
	}
	as, err := statusOf(after)
	if err != nil {
		return false, err
	}
	if equality.Semantic.DeepEqual(bs, as) {
		return false, nil
	}
	err = c.Status().Update(ctx, after)
	switch {
	case err == nil:
		recordWrite(ctx, c, after, statusPaths(bs, as)...)
		return false, nil
	case apierrors.IsNotFound(err):
		return false, statusNotFound(ctx, c, opts.APIReader, key, after, err)
	case !apierrors.IsConflict(err):
		return false, fmt.Errorf("write status of %s %s: %w", kindOf(c, after), key, err)
	}

	ready := ""
	if aggregate {
		ready = opts.ReadyCondition
	}
	bm, _ := bs.(map[string]any)
	am, _ := as.(map[string]any)
	backoff := opts.ConflictBackoff
	if backoff.Steps == 0 {
		backoff = retry.DefaultBackoff
	}
	var reader client.Reader = c
	if opts.APIReader != nil {
		reader = opts.APIReader
	}
	logger := log.FromContext(ctx)
	err = retry.RetryOnConflict(backoff, func() error {
		stale = false
		fresh := newObject(after)
		if err := reader.Get(ctx, key, fresh); err != nil {
			return err
		}
		if fresh.GetGeneration() > before.GetGeneration() {
			logger.V(1).Info("status not written: the spec changed since this pass read it, "+
				"and the pass of the new generation writes the status", "generation", before.GetGeneration(),
				"currentGeneration", fresh.GetGeneration())
			return nil
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(fresh)
		if err != nil {
			return fmt.Errorf("convert %T to unstructured: %w", fresh, err)
		}
		raw := u["status"]
		fs, _ := raw.(map[string]any)
		merged, kept, err := MergeStatus(bm, am, fs, ready)
		if err != nil {
			return err
		}
		stale = LogKept(ctx, kept)
		if !equality.Semantic.DeepEqual(fs, merged) {
			u["status"] = merged
			fresh = newObject(after)
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, fresh); err != nil {
				return fmt.Errorf("convert unstructured back to %T: %w", fresh, err)
			}
		}
		if aggregate {
			AggregateReady(fresh, opts.ReadyCondition, opts.SubConditions)
		}
		ns, err := statusOf(fresh)
		if err != nil {
			return err
		}
		if equality.Semantic.DeepEqual(raw, ns) {
			return nil
		}
		if err := c.Status().Update(ctx, fresh); err != nil {
			return err
		}
		recordWrite(ctx, c, fresh, statusPaths(raw, ns)...)
		return nil
	})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("write status of %s %s after a conflict: %w", kindOf(c, after), key, err)
	}
	return stale, nil
}

// statusPaths returns the sorted paths ("status.<field>") of the top-level status fields
// that differ between the unstructured statuses before and after.
func statusPaths(before, after any) []string {
	bm, _ := before.(map[string]any)
	am, _ := after.(map[string]any)
	var out []string
	for k, v := range am {
		if !equality.Semantic.DeepEqual(bm[k], v) {
			out = append(out, "status."+k)
		}
	}
	for k := range bm {
		if _, ok := am[k]; !ok {
			out = append(out, "status."+k)
		}
	}
	slices.Sort(out)
	return out
}

// logWrites logs the writes collected during a pass (see PassOptions.LogWrites) and
// records them into the collection of ctx, the context RunPass was given, if any.
func logWrites(ctx context.Context, writes *apply.Writes) {
	logger := log.FromContext(ctx)
	for _, w := range writes.All() {
		apply.Record(ctx, w)
		switch w.Action {
		case apply.ActionCreated, apply.ActionConfigured, apply.ActionDeleted:
			msg := w
			msg.Fields = nil // logged as a value of their own
			logger.Info(msg.String(), "fields", w.Fields)
		default:
			logger.V(1).Info(w.String())
		}
	}
}

// statusNotFound tells the two 404s of a status write apart: the object is gone (its
// last finalizer was removed during the pass), which needs no write, or the object is
// there and its type serves no status subresource, which would drop every status write
// of every pass and is reported as [ErrStatusNotServed].
//
// An object that this pass saw being deleted with no finalizer left is gone: the API
// server removes it at once. Otherwise the object is read again, bypassing a cache that
// may not have seen the deletion yet: through reader when set, else as unstructured
// through c (see [PassOptions].APIReader).
func statusNotFound(ctx context.Context, c client.Client, reader client.Reader, key client.ObjectKey, obj Object, writeErr error) error {
	if obj.GetDeletionTimestamp() != nil && len(obj.GetFinalizers()) == 0 {
		return nil
	}
	var err error
	if reader != nil {
		err = reader.Get(ctx, key, newObject(obj))
	} else {
		err = apply.GetUncached(ctx, c, key, newObject(obj))
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("write status of %s %s: %w; get after the 404: %w", kindOf(c, obj), key, writeErr, err)
	}
	return fmt.Errorf("write status of %s %s: %w (enable the status subresource of its CRD): %w",
		kindOf(c, obj), key, ErrStatusNotServed, writeErr)
}

// repairConditions makes every condition of obj one the API server accepts, as
// [SetCondition] would have, and logs each condition whose reason had to be replaced (or
// was replaced by SetCondition) at error level: a step sets reasons the API refuses.
func repairConditions(ctx context.Context, obj Object) {
	conds := *obj.Conditions()
	for i := range conds {
		cond := &conds[i]
		if ValidateReason(cond.Reason) != nil || len(cond.Message) > MaxMessageLength || !utf8.ValidString(cond.Message) {
			cond.Reason, cond.Message = sanitize(cond.Reason, cond.Message)
		}
		if cond.LastTransitionTime.IsZero() {
			cond.LastTransitionTime = metav1.Now()
		}
		if cond.Reason == ReasonInvalidReason {
			log.FromContext(ctx).Error(ErrInvalidReason, "a condition was set with a reason the API server refuses; "+
				"it is stored with reason "+ReasonInvalidReason, "conditionType", cond.Type, "message", truncate(cond.Message, 256))
		}
	}
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
