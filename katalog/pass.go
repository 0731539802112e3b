package katalog

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

// crdReconciler reconciles the custom resources of one CRD entry.
type crdReconciler struct {
	engine *Engine
	crd    *CRD
}

// crView lets the condition helpers of package reconcile work on an unstructured custom
// resource: its conditions are decoded into conds and encoded back before the status write.
type crView struct {
	*unstructured.Unstructured
	conds []metav1.Condition
}

func (v *crView) Conditions() *[]metav1.Condition { return &v.conds }

// outcome is how a pass ended, for the CRD's health.
type outcome int

const (
	outcomeCounted    outcome = iota // a reconcile that succeeded or failed
	outcomeNotCounted                // waiting for a dependency: not the CRD's own doing
)

// Reconcile runs one pass over the custom resource req names and writes its status
// through the status subresource on every exit path, when it changed.
func (r *crdReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := namespaceFilter{allowed: r.crd.AllowedNamespaces, restricted: r.crd.RestrictedNamespaces}
	if !ns.admits(req.Namespace) {
		log.FromContext(ctx).V(1).Info("custom resource outside the CRD's namespaces; not reconciled")
		return ctrl.Result{}, nil
	}
	cr := newCR(r.crd)
	if err := r.engine.reader.Get(ctx, req.NamespacedName, cr); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get %s %s: %w", r.crd.APITypes.Kind, req.NamespacedName, err)
	}
	before := cr.DeepCopy()
	view := &crView{Unstructured: cr}
	conds, err := readConditions(cr)
	if err != nil {
		return ctrl.Result{}, err
	}
	view.conds = conds
	res, oc, err := r.pass(ctx, view)
	if err != nil {
		res = ctrl.Result{}
		reconcile.MarkFalse(view, reconcile.ConditionReady, ReasonReconcileFailed, err.Error())
	}
	if serr := r.writeStatus(ctx, before, view); serr != nil {
		err = reconcile.JoinErrors(err, serr)
	}
	if oc == outcomeCounted || err != nil {
		r.engine.health[r.crd.Name].record(err)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return res, nil
}

// pass does the work of one reconcile on v; Reconcile writes the status afterwards.
func (r *crdReconciler) pass(ctx context.Context, v *crView) (ctrl.Result, outcome, error) {
	e := r.engine
	cr := v.Unstructured
	if waiting := e.waitingFor(r.crd); len(waiting) > 0 {
		parts := make([]string, len(waiting))
		for i, dep := range waiting {
			parts[i] = fmt.Sprintf("CRD %s to be %s", dep, r.crd.DependsOn[dep])
		}
		reconcile.MarkFalse(v, reconcile.ConditionReady, ReasonWaitingForDependency, "waiting for "+strings.Join(parts, ", "))
		return ctrl.Result{RequeueAfter: e.opts.DependencyRetry}, outcomeNotCounted, nil
	}
	box := r.crd.OperatorBox
	if box == nil {
		box = &OperatorBox{}
	}
	if cr.GetDeletionTimestamp() != nil {
		res, err := r.deletion(ctx, v, box)
		return res, outcomeCounted, err
	}
	if box.OnDelete != nil {
		if _, err := reconcile.AddFinalizer(ctx, e.applier, cr, Finalizer); err != nil {
			return ctrl.Result{}, outcomeCounted, fmt.Errorf("add finalizer to %s %s/%s: %w", cr.GetKind(), cr.GetNamespace(), cr.GetName(), err)
		}
	}
	d := newPassData(cr)
	mutateFirst := r.crd.Mutation != nil && r.crd.Mutation.MutateFirst
	if mutateFirst {
		if err := r.mutate(ctx, cr, d); err != nil {
			return ctrl.Result{}, outcomeCounted, err
		}
	}
	denied, err := r.validate(cr, d)
	if err != nil {
		return ctrl.Result{}, outcomeCounted, err
	}
	if denied != "" {
		reconcile.MarkFalse(v, reconcile.ConditionReady, ReasonValidationFailed, denied)
		return ctrl.Result{}, outcomeCounted, nil
	}
	if !mutateFirst {
		if err := r.mutate(ctx, cr, d); err != nil {
			return ctrl.Result{}, outcomeCounted, err
		}
	}
	if err := r.readCross(ctx, cr, box, d); err != nil {
		return ctrl.Result{}, outcomeCounted, err
	}
	want := map[childKey]bool{}
	err = r.runGroup(ctx, cr, "onCreate", box.OnCreate, true, d, want)
	if err == nil {
		err = r.runGroup(ctx, cr, "onReconcile", box.OnReconcile, false, d, want)
	}
	if err == nil {
		// Only a pass that rendered every objectDecl knows what is no longer wanted.
		err = r.prune(ctx, cr, want)
	}
	children, cerr := r.readChildren(ctx, cr)
	d["children"] = children
	err = errors.Join(err, cerr)
	if serr := r.statusFields(v, box, d); serr != nil {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return ctrl.Result{}, outcomeCounted, err
	}
	reconcile.MarkTrue(v, reconcile.ConditionReady, ReasonReconciled, "every declared object is in place")
	return ctrl.Result{RequeueAfter: r.crd.ResyncPeriod()}, outcomeCounted, nil
}

// deletion runs onDelete for a custom resource being deleted that carries the finalizer:
// its external calls and objects, then waits for its Jobs to finish, then removes the
// finalizer.
func (r *crdReconciler) deletion(ctx context.Context, v *crView, box *OperatorBox) (ctrl.Result, error) {
	cr := v.Unstructured
	if !controllerutil.ContainsFinalizer(cr, Finalizer) {
		return ctrl.Result{}, nil
	}
	if box.OnDelete != nil {
		d := newPassData(cr)
		if err := r.readCross(ctx, cr, box, d); err != nil {
			return ctrl.Result{}, err
		}
		want := map[childKey]bool{}
		if err := r.runGroup(ctx, cr, "onDelete", box.OnDelete, true, d, want); err != nil {
			return ctrl.Result{}, err
		}
		for _, name := range sortedWanted(want, "job") {
			job := &batchv1.Job{}
			if err := r.engine.applier.Get(ctx, client.ObjectKey{Namespace: cr.GetNamespace(), Name: name}, job); err != nil {
				if apierrors.IsNotFound(err) { // just created; the cache has not seen it yet
					return ctrl.Result{RequeueAfter: r.engine.opts.DeletionPoll}, nil
				}
				return ctrl.Result{}, fmt.Errorf("get onDelete Job %s/%s: %w", cr.GetNamespace(), name, err)
			}
			if !jobFinished(job) {
				reconcile.MarkFalse(v, reconcile.ConditionReady, ReasonDeleting, "waiting for onDelete Job "+name)
				return ctrl.Result{RequeueAfter: r.engine.opts.DeletionPoll}, nil
			}
		}
	}
	if _, err := reconcile.RemoveFinalizer(ctx, r.engine.applier, cr, Finalizer); err != nil {
		return ctrl.Result{}, fmt.Errorf("remove finalizer of %s %s/%s: %w", cr.GetKind(), cr.GetNamespace(), cr.GetName(), err)
	}
	return ctrl.Result{}, nil
}

func sortedWanted(want map[childKey]bool, kind string) []string {
	var out []string
	for k := range want {
		if k.kind == kind {
			out = append(out, k.name)
		}
	}
	return sortedKeys(toSet(out))
}

func toSet(s []string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[x] = true
	}
	return m
}

// jobFinished reports whether the Job completed or failed for good.
func jobFinished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == "True" {
			return true
		}
	}
	return false
}

// readCross puts each cross reference's custom resource, read from the manager's cache,
// under d["cross"][alias]: {found, metadata, labels, spec, status}; found is false (and
// the rest empty) when there is none.
func (r *crdReconciler) readCross(ctx context.Context, cr *unstructured.Unstructured, box *OperatorBox, d passData) error {
	cross := d["cross"].(map[string]any)
	for _, x := range box.Cross {
		name, err := render(x.Selector.Name, d, "cross "+x.Alias()+" selector.name")
		if err != nil {
			return err
		}
		ns, err := render(x.Selector.Namespace, d, "cross "+x.Alias()+" selector.namespace")
		if err != nil {
			return err
		}
		if ns == "" {
			ns = cr.GetNamespace()
		}
		other := newCR(r.engine.crds[x.CRD])
		entry := map[string]any{"found": false, "metadata": map[string]any{}, "labels": map[string]any{}, "spec": map[string]any{}, "status": map[string]any{}}
		switch err := r.engine.reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, other); {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("read cross %s (%s %s/%s): %w", x.Alias(), other.GetKind(), ns, name, err)
		default:
			entry["found"] = true
			for _, k := range []string{"metadata", "spec", "status"} {
				if v, ok := other.Object[k]; ok {
					entry[k] = v
				}
			}
			labels := map[string]any{}
			for k, v := range other.GetLabels() {
				labels[k] = v
			}
			entry["labels"] = labels
		}
		cross[x.Alias()] = entry
	}
	return nil
}

// statusFields evaluates the status fields in order and writes each whose conditions hold
// into status.<path>: the last one written for a path wins.
func (r *crdReconciler) statusFields(v *crView, box *OperatorBox, d passData) error {
	if box.Status == nil {
		return nil
	}
	status, _ := v.Object["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		v.Object["status"] = status
	}
	var errs []error
	for i, f := range box.Status.Fields {
		ok, err := gate(f.When, f.AnyOf, d)
		if err != nil {
			errs = append(errs, fmt.Errorf("status.fields[%d] %s: %w", i, f.Path, err))
			continue
		}
		if !ok {
			continue
		}
		val, err := render(f.Value, d, fmt.Sprintf("status.fields[%d] %s", i, f.Path))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		setPath(status, f.Path, val)
	}
	return errors.Join(errs...)
}

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
// mutation defaults), the pass of that generation writes the status instead. A custom resource that is gone needs no status.
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
		return nil
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
