package katalog

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

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
