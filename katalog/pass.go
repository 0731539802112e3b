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
	box    *OperatorBox
	// live is the step table of a custom resource that is not being deleted, deleting the
	// one of a custom resource being deleted, status the step that reads the children
	// and evaluates the status fields after the declared objects were written.
	live, deleting, status *reconcile.Pipeline[*crView]
}

// crView lets the condition helpers of package reconcile work on an unstructured custom
// resource: its conditions are decoded into conds and encoded back before the status write.
type crView struct {
	*unstructured.Unstructured
	conds []metav1.Condition
}

func (v *crView) Conditions() *[]metav1.Condition { return &v.conds }

// passState is what the steps of one pass hand to each other (reconcile.WithState).
type passState struct {
	data passData
	want map[childKey]bool
	// waiting is set when the pass waits for a dependsOn target: not the CRD's own doing,
	// so it does not count for the CRD's health.
	waiting bool
	// denied is the message of a deny validation rule that does not hold.
	denied string
	// crossRead is set once the cross references are read: from there on the status step
	// runs on every exit path.
	crossRead bool
	// failed is set when a step after cross failed: the status step then leaves Ready alone.
	failed bool
	// externalCalls counts the external calls the pass made (EngineOptions.ExternalCallsPerPass).
	externalCalls int
}

// errDenied ends a pass whose custom resource a deny validation rule refuses; Reconcile
// turns it into the Ready condition's ValidationFailed reason.
var errDenied = errors.New("denied by a validation rule")

// newCRDReconciler builds the step tables of c's passes. Each step is named
// "<crd>/<step>" for its metrics (EngineOptions.Metrics) and errors:
//
//	live:     dependsOn, (finalizer), mutation and validation (in the order
//	          mutation.mutateFirst gives), cross, onCreate, onReconcile, prune
//	deleting: (namespace being deleted), onDelete (a deletion never waits for dependsOn)
//	status:   status (children and status fields; after cross, on every exit path)
func newCRDReconciler(e *Engine, c *CRD) (*crdReconciler, error) {
	r := &crdReconciler{engine: e, crd: c, box: c.OperatorBox}
	if r.box == nil {
		r.box = &OperatorBox{}
	}
	step := func(name string, run reconcile.StepFunc[*crView]) reconcile.Step[*crView] {
		return reconcile.Step[*crView]{Name: c.Name + "/" + name, Condition: reconcile.ConditionReady, Run: run}
	}
	first, second := step("validation", r.validation), step("mutation", r.mutation)
	if c.Mutation != nil && c.Mutation.MutateFirst {
		first, second = second, first
	}
	var err error
	if r.live, err = reconcile.NewPipeline(e.opts.Metrics,
		step("dependsOn", r.dependencies),
		reconcile.Step[*crView]{Run: r.finalizer},
		first, second,
		step("cross", r.cross),
		step("onCreate", r.onCreate),
		step("onReconcile", r.onReconcile),
		step("prune", r.pruneStep),
	); err != nil {
		return nil, err
	}
	if r.deleting, err = reconcile.NewPipeline(e.opts.Metrics,
		reconcile.Step[*crView]{Run: r.terminatingNamespace},
		step("onDelete", func(ctx context.Context, v *crView) (ctrl.Result, error) { return r.deletion(ctx, v, r.box) }),
	); err != nil {
		return nil, err
	}
	r.status, err = reconcile.NewPipeline(e.opts.Metrics, step("status", r.statusStep))
	return r, err
}

// Reconcile runs one pass over the custom resource req names and writes its status
// through the status subresource on every exit path, when it changed. When the write's
// conflict retry kept another writer's newer value over a change of this pass (see
// writeStatus), a pass without an error requeues after reconcile.StaleStatusRequeue at
// the latest.
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
	st := &passState{want: map[childKey]bool{}}
	res, err := r.pass(reconcile.WithState(ctx, st), view, st)
	switch {
	case st.denied != "":
		reconcile.MarkFalse(view, reconcile.ConditionReady, ReasonValidationFailed, st.denied)
		res, err = ctrl.Result{}, nil
	case err != nil:
		res = ctrl.Result{}
		reconcile.MarkFalse(view, reconcile.ConditionReady, failureReason(err), err.Error())
	}
	stale, serr := r.writeStatus(ctx, before, view)
	if serr != nil {
		err = reconcile.JoinErrors(err, serr)
	}
	if !st.waiting || err != nil {
		r.engine.health[r.crd.Name].record(req.Namespace, err)
	}
	switch {
	case err != nil && stale && reconcile.IsTerminal(err):
		return ctrl.Result{}, reconcile.JoinErrors(err, reconcile.ErrStatusSuperseded)
	case err != nil:
		return ctrl.Result{}, err
	case stale:
		res = reconcile.Shortest(res, ctrl.Result{RequeueAfter: reconcile.StaleStatusRequeue})
	}
	return res, nil
}

// pass runs the step table that fits v, then, once the cross references were read, the
// status step; Reconcile writes the status afterwards.
func (r *crdReconciler) pass(ctx context.Context, v *crView, st *passState) (ctrl.Result, error) {
	if v.GetDeletionTimestamp() != nil {
		return r.deleting.Run(ctx, v)
	}
	res, err := r.live.Run(ctx, v)
	if !st.crossRead {
		return res, err
	}
	if err != nil {
		st.failed = true
		_, serr := r.status.Run(ctx, v)
		return ctrl.Result{}, errors.Join(err, serr)
	}
	return r.status.Run(ctx, v)
}

// dependencies ends the pass while a CRD of dependsOn has not reached its state for the
// custom resources in v's namespace (see Engine.dependencyMet).
func (r *crdReconciler) dependencies(ctx context.Context, v *crView) (ctrl.Result, error) {
	waiting := r.engine.waitingFor(r.crd, v.GetNamespace())
	if len(waiting) == 0 {
		return ctrl.Result{}, nil
	}
	parts := make([]string, len(waiting))
	for i, dep := range waiting {
		parts[i] = fmt.Sprintf("CRD %s to be %s", dep, r.crd.DependsOn[dep])
		if r.crd.DependsOn[dep] == DependencyHealthy && r.engine.Synced(dep) {
			parts[i] += " in namespace " + v.GetNamespace()
		}
	}
	reconcile.MarkFalse(v, reconcile.ConditionReady, ReasonWaitingForDependency, "waiting for "+strings.Join(parts, ", "))
	reconcile.StateFrom[passState](ctx).waiting = true
	return ctrl.Result{RequeueAfter: r.engine.opts.DependencyRetry}, nil
}

// finalizer adds Finalizer to a custom resource whose CRD declares onDelete.
// The template data of the pass is taken from the custom resource after it.
func (r *crdReconciler) finalizer(ctx context.Context, v *crView) (ctrl.Result, error) {
	if r.box.OnDelete != nil {
		if _, err := reconcile.AddFinalizer(ctx, r.engine.applier, v.Unstructured, Finalizer); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer to %s %s/%s: %w", v.GetKind(), v.GetNamespace(), v.GetName(), err)
		}
	}
	reconcile.StateFrom[passState](ctx).data = newPassData(v.Unstructured)
	return ctrl.Result{}, nil
}

// mutation applies the mutation defaults.
func (r *crdReconciler) mutation(ctx context.Context, v *crView) (ctrl.Result, error) {
	return ctrl.Result{}, r.mutate(ctx, v.Unstructured, reconcile.StateFrom[passState](ctx).data)
}

// validation checks the validation rules; a deny rule that does not hold ends the pass.
func (r *crdReconciler) validation(ctx context.Context, v *crView) (ctrl.Result, error) {
	st := reconcile.StateFrom[passState](ctx)
	denied, err := r.validate(v.Unstructured, st.data)
	if err != nil || denied == "" {
		return ctrl.Result{}, err
	}
	st.denied = denied
	return ctrl.Result{}, errDenied
}

// cross reads the cross references into the template data.
func (r *crdReconciler) cross(ctx context.Context, v *crView) (ctrl.Result, error) {
	st := reconcile.StateFrom[passState](ctx)
	if err := r.readCross(ctx, v.Unstructured, r.box, st.data); err != nil {
		return ctrl.Result{}, err
	}
	st.crossRead = true
	return ctrl.Result{}, nil
}

// onCreate makes onCreate's external calls and writes its objects that do not exist yet.
func (r *crdReconciler) onCreate(ctx context.Context, v *crView) (ctrl.Result, error) {
	st := reconcile.StateFrom[passState](ctx)
	return ctrl.Result{}, r.runGroup(ctx, v.Unstructured, "onCreate", r.box.OnCreate, true, st.data, st.want)
}

// onReconcile makes onReconcile's external calls and applies its objects.
func (r *crdReconciler) onReconcile(ctx context.Context, v *crView) (ctrl.Result, error) {
	st := reconcile.StateFrom[passState](ctx)
	return ctrl.Result{}, r.runGroup(ctx, v.Unstructured, "onReconcile", r.box.OnReconcile, false, st.data, st.want)
}

// pruneStep deletes the children no declaration wants any more, except those kept
// protects (create-only objects whose declaration still names them). It runs only after
// every declaration rendered: only such a pass knows what is no longer wanted.
func (r *crdReconciler) pruneStep(ctx context.Context, v *crView) (ctrl.Result, error) {
	st := reconcile.StateFrom[passState](ctx)
	keep, err := r.kept(st.data)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("prune: %w", err)
	}
	for k := range st.want {
		keep[k] = true
	}
	return ctrl.Result{}, r.prune(ctx, v.Unstructured, keep)
}

// statusStep reads the children into the template data and writes the status fields;
// when the steps before it succeeded too, it sets Ready and asks for the resync.
func (r *crdReconciler) statusStep(ctx context.Context, v *crView) (ctrl.Result, error) {
	st := reconcile.StateFrom[passState](ctx)
	children, err := r.readChildren(ctx, v.Unstructured)
	st.data["children"] = children
	err = errors.Join(err, r.statusFields(v, r.box, st.data))
	if err != nil || st.failed {
		return ctrl.Result{}, err
	}
	reconcile.MarkTrue(v, reconcile.ConditionReady, ReasonReconciled, "every declared object is in place")
	return ctrl.Result{RequeueAfter: r.crd.ResyncPeriod()}, nil
}

// selected renders x's selector against d, the data of reader: the key of the custom
// resource x reads (an empty selector.namespace is reader's own namespace).
func (x CrossRef) selected(d passData, reader client.Object) (client.ObjectKey, error) {
	name, err := render(x.Selector.Name, d, "cross "+x.Alias()+" selector.name")
	if err != nil {
		return client.ObjectKey{}, err
	}
	ns, err := render(x.Selector.Namespace, d, "cross "+x.Alias()+" selector.namespace")
	if err != nil {
		return client.ObjectKey{}, err
	}
	if ns == "" {
		ns = reader.GetNamespace()
	}
	return client.ObjectKey{Namespace: ns, Name: name}, nil
}

// crossKey is the key of the custom resource that the cross entry x of reader reads: x's
// selector rendered against d, the data of reader (see selected), confined to reader's
// namespace unless x sets AllowCrossNamespace and the target CRD admits the namespace.
// A key it refuses is an error wrapping ErrCrossNamespace.
func (e *Engine) crossKey(x CrossRef, d passData, reader client.Object) (client.ObjectKey, error) {
	key, err := x.selected(d, reader)
	if err != nil {
		return client.ObjectKey{}, err
	}
	if err := e.crossNamespaceAllowed(x, reader.GetNamespace(), key.Namespace); err != nil {
		return client.ObjectKey{}, err
	}
	return key, nil
}

// crossNamespaceAllowed returns nil when the cross entry x of a reader in namespace from
// may read in namespace to: the same namespace, or x sets AllowCrossNamespace and the
// target CRD's allowedNamespaces and restrictedNamespaces admit to. Otherwise it returns
// an error wrapping ErrCrossNamespace that names the cross entry and the field.
func (e *Engine) crossNamespaceAllowed(x CrossRef, from, to string) error {
	if to == from {
		return nil
	}
	if !x.AllowCrossNamespace {
		return fmt.Errorf("%w: cross %s selector.namespace is %q, not the custom resource's own namespace %q, and the Katalog's cross entry does not set allowCrossNamespace",
			ErrCrossNamespace, x.Alias(), to, from)
	}
	if t := e.crds[x.CRD]; t != nil && !(namespaceFilter{allowed: t.AllowedNamespaces, restricted: t.RestrictedNamespaces}).admits(to) {
		return fmt.Errorf("%w: cross %s selector.namespace is %q, a namespace that CRD %s does not operate (allowedNamespaces, restrictedNamespaces)",
			ErrCrossNamespace, x.Alias(), to, x.CRD)
	}
	return nil
}

// readCross puts each cross reference's custom resource, read from the manager's cache,
// under d["cross"][alias]: {found, metadata, labels, spec, status}; found is false (and
// the rest empty) when there is none. The entries are read in order (a selector may use
// the ones before it); a selector that cannot be rendered or that crossKey refuses ends
// the reading with its error and leaves d without cross data.
func (r *crdReconciler) readCross(ctx context.Context, cr *unstructured.Unstructured, box *OperatorBox, d passData) (err error) {
	cross := d["cross"].(map[string]any)
	defer func() {
		if err != nil {
			clear(cross)
		}
	}()
	for _, x := range box.Cross {
		key, err := r.engine.crossKey(x, d, cr)
		if err != nil {
			return err
		}
		other := newCR(r.engine.crds[x.CRD])
		entry := map[string]any{"found": false, "metadata": map[string]any{}, "labels": map[string]any{}, "spec": map[string]any{}, "status": map[string]any{}}
		switch err := r.engine.reader.Get(ctx, key, other); {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("read cross %s (%s %s): %w", x.Alias(), other.GetKind(), key, err)
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
