package katalog

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

// readConditions decodes status.conditions of cr.
func readConditions(cr *unstructured.Unstructured) ([]metav1.Condition, error) {
	raw, found, err := unstructured.NestedSlice(cr.Object, "status", "conditions")
	if err != nil || !found {
		return nil, nil //nolint:nilerr // a status without a list of conditions has none
	}
	out := make([]metav1.Condition, 0, len(raw))
	for i, item := range raw {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		var c metav1.Condition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c); err != nil {
			return nil, fmt.Errorf("%s %s/%s: status.conditions[%d]: %w", cr.GetKind(), cr.GetNamespace(), cr.GetName(), i, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// storeConditions encodes v's conditions into status.conditions.
func storeConditions(v *crView) error {
	if len(v.conds) == 0 {
		return nil
	}
	list := make([]any, 0, len(v.conds))
	for _, c := range v.conds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c)
		if err != nil {
			return fmt.Errorf("condition %s: %w", c.Type, err)
		}
		list = append(list, m)
	}
	return unstructured.SetNestedSlice(v.Object, list, "status", "conditions")
}

// writeStatus writes v's status through the status subresource when it differs from
// before's. On a 409 Conflict it re-reads the custom resource from the API server and
// merges this pass's changes into it three ways with reconcile.MergeStatus, as
// reconcile.RunPass does: each condition the pass set or changed (Ready among them: the
// pass decides it, nothing aggregates it) and each top-level status field it changed is
// written where the stored custom resource still holds what the pass read. Where another
// writer changed it since (a newer pass, or the pass's own read served by a cache lagging
// behind), the stored value stays, the change is logged at V(1) and stale is true: the
// caller requeues the custom resource after reconcile.StaleStatusRequeue. Conditions and
// fields the pass did not change keep the stored values. When the re-read object has a
// newer generation than the pass saw (after its own mutation defaults), the pass of that
// generation writes the status instead. A 404 is told apart by statusNotFound: a custom
// resource that is gone needs no status, one that is there while its CRD serves no status
// subresource is an error wrapping reconcile.ErrStatusNotServed.
func (r *crdReconciler) writeStatus(ctx context.Context, before *unstructured.Unstructured, v *crView) (stale bool, err error) {
	if err := storeConditions(v); err != nil {
		return false, err
	}
	after := v.Unstructured
	bs, as := before.Object["status"], after.Object["status"]
	if equality.Semantic.DeepEqual(bs, as) {
		return false, nil
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reconcile.StatusWriteTimeout)
	defer cancel()
	e := r.engine
	err = e.applier.Status().Update(wctx, after)
	switch {
	case err == nil:
		return false, nil
	case apierrors.IsNotFound(err):
		return false, r.statusNotFound(wctx, after, err)
	case !apierrors.IsConflict(err):
		return false, fmt.Errorf("write status of %s %s/%s: %w", after.GetKind(), after.GetNamespace(), after.GetName(), err)
	}
	bm, _ := bs.(map[string]any)
	am, _ := as.(map[string]any)
	logger := log.FromContext(ctx)
	err = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		stale = false
		fresh := newCR(r.crd)
		if err := e.apiReader.Get(wctx, client.ObjectKeyFromObject(after), fresh); err != nil {
			return err
		}
		if fresh.GetGeneration() > after.GetGeneration() { // not by this pass's own defaults
			logger.V(1).Info("status not written: the spec changed since this pass read it, "+
				"and the pass of the new generation writes the status", "generation", after.GetGeneration(),
				"currentGeneration", fresh.GetGeneration())
			return nil
		}
		fs, _ := fresh.Object["status"].(map[string]any)
		merged, kept, err := reconcile.MergeStatus(bm, am, fs, "")
		if err != nil {
			return err
		}
		stale = reconcile.LogKept(ctx, kept)
		if equality.Semantic.DeepEqual(fs, merged) {
			return nil
		}
		fresh.Object["status"] = merged
		return e.applier.Status().Update(wctx, fresh)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("write status of %s %s/%s after a conflict: %w", after.GetKind(), after.GetNamespace(), after.GetName(), err)
	}
	return stale && err == nil, nil
}

// statusNotFound tells the two 404s of a status write apart, as package reconcile does:
// the custom resource is gone (its last finalizer was removed during the pass), which
// needs no write, or it is there and its CRD serves no status subresource, which would
// drop the status of every pass and is returned as an error wrapping
// reconcile.ErrStatusNotServed naming the custom resource. A custom resource this pass
// saw being deleted with no finalizer left is gone; otherwise it is read again through
// the engine's API reader, past a cache that may not have seen the deletion yet.
func (r *crdReconciler) statusNotFound(ctx context.Context, cr *unstructured.Unstructured, writeErr error) error {
	if cr.GetDeletionTimestamp() != nil && len(cr.GetFinalizers()) == 0 {
		return nil
	}
	switch err := r.engine.apiReader.Get(ctx, client.ObjectKeyFromObject(cr), newCR(r.crd)); {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("write status of %s %s/%s: %w; get after the 404: %w", cr.GetKind(), cr.GetNamespace(), cr.GetName(), writeErr, err)
	}
	return fmt.Errorf("write status of %s %s/%s: %w (enable the status subresource of its CRD): %w",
		cr.GetKind(), cr.GetNamespace(), cr.GetName(), reconcile.ErrStatusNotServed, writeErr)
}
