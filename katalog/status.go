package katalog

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
// before's. On a conflict it re-reads the custom resource from the API server and applies
// this pass's changes (the top-level status fields it changed, the conditions it set)
// to it; when the re-read object has a newer generation than the pass saw (after its own
// mutation defaults), the pass of that generation writes the status instead. A 404 is
// told apart by statusNotFound: a custom resource that is gone needs no status, one that
// is there while its CRD serves no status subresource is an error wrapping
// reconcile.ErrStatusNotServed.
func (r *crdReconciler) writeStatus(ctx context.Context, before *unstructured.Unstructured, v *crView) error {
	if err := storeConditions(v); err != nil {
		return err
	}
	after := v.Unstructured
	bs, as := before.Object["status"], after.Object["status"]
	if equality.Semantic.DeepEqual(bs, as) {
		return nil
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reconcile.StatusWriteTimeout)
	defer cancel()
	e := r.engine
	err := e.applier.Status().Update(wctx, after)
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return r.statusNotFound(wctx, after, err)
	case !apierrors.IsConflict(err):
		return fmt.Errorf("write status of %s %s/%s: %w", after.GetKind(), after.GetNamespace(), after.GetName(), err)
	}
	bm, _ := bs.(map[string]any)
	am, _ := as.(map[string]any)
	err = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		fresh := newCR(r.crd)
		if err := e.apiReader.Get(wctx, client.ObjectKeyFromObject(after), fresh); err != nil {
			return err
		}
		if fresh.GetGeneration() > after.GetGeneration() { // not by this pass's own defaults
			return nil
		}
		fconds, err := readConditions(fresh)
		if err != nil {
			return err
		}
		fs, _ := fresh.Object["status"].(map[string]any)
		if fs == nil {
			fs = map[string]any{}
		}
		for k, val := range am {
			if k != "conditions" && !equality.Semantic.DeepEqual(bm[k], val) {
				fs[k] = runtime.DeepCopyJSONValue(val)
			}
		}
		for k := range bm {
			if _, ok := am[k]; !ok && k != "conditions" {
				delete(fs, k)
			}
		}
		fresh.Object["status"] = fs
		fv := &crView{Unstructured: fresh, conds: fconds}
		for _, c := range v.conds {
			apimeta.SetStatusCondition(&fv.conds, c)
		}
		if err := storeConditions(fv); err != nil {
			return err
		}
		return e.applier.Status().Update(wctx, fresh)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("write status of %s %s/%s after a conflict: %w", after.GetKind(), after.GetNamespace(), after.GetName(), err)
	}
	return nil
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
