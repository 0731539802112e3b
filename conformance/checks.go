package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// poll is the interval of the suite's waits.
const poll = 100 * time.Millisecond

// quietPasses is how many passes after the first quiet one must be quiet too.
const quietPasses = 3

// checkConvergence: each valid sample reaches Ready=True for its current generation.
func (w *world) checkConvergence() error {
	_, err := w.startAndConverge(nil)
	return err
}

// checkQuiescence: once converged, a pass writes nothing and moves no resourceVersion
// (with ExpectNoRequests: sends nothing at all).
func (w *world) checkQuiescence() error {
	r, err := w.startAndConverge(nil)
	if err != nil {
		return err
	}
	var errs []error
	for _, cr := range w.crs {
		errs = append(errs, w.quiet(r, cr))
	}
	return errors.Join(errs...)
}

// quiet runs passes of cr until one is quiet, then quietPasses more that must all be,
// and compares the stored state before and after them.
func (w *world) quiet(r *replica, cr *unstructured.Unstructured) error {
	var last *pass
	var noise []request
	for i := 0; ; i++ {
		last = w.pass(r, cr)
		if noise = w.noise(last); noise == nil {
			break
		}
		if i+1 >= w.opts.MaxPasses {
			return w.noisy(cr, last, noise, fmt.Sprintf("none of %d passes after Ready was quiet", w.opts.MaxPasses))
		}
		time.Sleep(poll)
	}
	before, err := w.versions()
	if err != nil {
		return err
	}
	for i := range quietPasses {
		p := w.pass(r, cr)
		if noise := w.noise(p); noise != nil {
			return w.noisy(cr, p, noise, fmt.Sprintf("converged pass %d of %d was not quiet", i+1, quietPasses))
		}
	}
	after, err := w.versions()
	if err != nil {
		return err
	}
	var errs []error
	for id, b := range before {
		a, ok := after[id]
		switch {
		case !ok:
			errs = append(errs, w.violation(b.what, "", "a converged pass must leave the objects it owns alone",
				"deleted during converged passes of %s", describe(cr)))
		case a.rv != b.rv && a.entries != b.entries:
			errs = append(errs, w.violation(b.what, "metadata.resourceVersion",
				"compare the desired state with the stored one and write only on a difference (apply.EnsureObject and reconcile.RunPass do); "+
					"never put a timestamp or a counter into what you write",
				"written by field manager %q during converged passes of %s (resourceVersion %s -> %s)",
				w.opts.FieldManager, describe(cr), b.rv, a.rv))
		}
	}
	for id, a := range after {
		if _, ok := before[id]; !ok {
			errs = append(errs, w.violation(a.what, "", "a converged pass must create nothing",
				"created during converged passes of %s", describe(cr)))
		}
	}
	return errors.Join(errs...)
}

// noise returns what made p not quiet: its writes, the writes sent outside any pass
// meanwhile, and (with ExpectNoRequests) its reads; nil for a quiet pass. An error of
// the pass is noise too.
func (w *world) noise(p *pass) []request {
	var out []request
	for _, r := range p.sent() {
		if r.isWrite() || w.opts.ExpectNoRequests {
			out = append(out, r)
		}
	}
	out = append(out, w.backgroundWrites(p.start, p.end)...)
	if _, err, _ := p.outcome(); err != nil && out == nil {
		out = []request{}
	}
	return out
}

// noisy describes a pass that was not quiet.
func (w *world) noisy(cr *unstructured.Unstructured, p *pass, noise []request, what string) *Violation {
	_, err, _ := p.outcome()
	var b strings.Builder
	b.WriteString(what)
	if err != nil {
		fmt.Fprintf(&b, "; it returned: %v", err)
	}
	if len(noise) > 0 {
		b.WriteString("; it sent:")
		for _, r := range noise {
			b.WriteString("\n  " + r.String())
		}
	}
	fix := "a converged pass must write nothing: compare with the stored object before writing, or write through " +
		"apply.Applier (it skips unchanged objects) and reconcile.RunPass (it writes the status only when it changed)"
	if w.opts.ExpectNoRequests {
		fix += "; with Options.ExpectNoRequests every read must be served by the manager's cache as well"
	}
	return w.violation(describe(cr), "", fix, "%s", b.String())
}

// version is an object's resourceVersion and its operator's managedFields entries.
type version struct {
	what, rv, entries string
}

// versions snapshots the CRs and their children.
func (w *world) versions() (map[string]version, error) {
	out := map[string]version{}
	for _, cr := range w.crs {
		cur, err := w.read(cr)
		if err != nil {
			return nil, fmt.Errorf("conformance: read %s: %w", describe(cr), err)
		}
		out["cr|"+describe(cr)] = version{what: describe(cr), rv: cur.GetResourceVersion(), entries: w.operatorEntries(cur.GetManagedFields())}
	}
	children, err := w.children(true)
	if err != nil {
		return nil, err
	}
	for _, c := range children {
		out[c.id()] = version{what: c.String(), rv: c.obj.ResourceVersion, entries: w.operatorEntries(c.obj.ManagedFields)}
	}
	return out, nil
}

// checkOwnership: every child is controlled or claimed by a CR, and (unless declared)
// nothing is created outside the CR's namespace.
func (w *world) checkOwnership() error {
	var before map[types.UID]string
	if !w.opts.OtherNamespaces {
		var err error
		if before, err = w.outside(); err != nil {
			return err
		}
	}
	if _, err := w.startAndConverge(nil); err != nil {
		return err
	}
	children, err := w.children(true)
	if err != nil {
		return err
	}
	var errs []error
	if len(children) == 0 {
		errs = append(errs, w.violation("", "Options.FieldManager",
			"set Options.FieldManager to the field manager your operator writes under (its apply.ApplierOptions.FieldManager)",
			"no object of namespace %s lists field manager %q in its managedFields, so the suite finds no child", w.ns, w.opts.FieldManager))
	}
	for _, c := range children {
		if w.ownerOf(c) != nil {
			continue
		}
		refs := "none"
		if len(c.obj.OwnerReferences) > 0 {
			refs = fmt.Sprintf("%v", c.obj.OwnerReferences)
		}
		errs = append(errs, w.violation(c.String(), "metadata.ownerReferences",
			"set the CR as the child's controller (apply.EnsureObject does; or controllerutil.SetControllerReference), "+
				"or on a target cluster claim it with apply.ClaimLabels",
			"written by %q but neither controlled by a sample CR nor claimed for one (owner references: %s)", w.opts.FieldManager, refs))
	}
	if !w.opts.OtherNamespaces {
		after, err := w.outside()
		if err != nil {
			return err
		}
		var created []string
		for uid, o := range after {
			if _, ok := before[uid]; !ok {
				created = append(created, o)
			}
		}
		slices.Sort(created)
		for _, o := range created {
			errs = append(errs, w.violation(o, "metadata.namespace",
				"create children in the CR's namespace, or declare Options.OtherNamespaces when the operator writes elsewhere by design",
				"written by %q outside the CR's namespace %s during the check", w.opts.FieldManager, w.ns))
		}
	}
	return errors.Join(errs...)
}

// outside lists the objects of other namespaces, and cluster-scoped ones, that the
// operator's field manager wrote, by UID. The check compares the lists from before the
// operator started and after the samples converged.
func (w *world) outside() (map[types.UID]string, error) {
	kinds, err := w.resourceKinds(true)
	if err != nil {
		return nil, err
	}
	mc, err := metadata.NewForConfig(w.adminConfig())
	if err != nil {
		return nil, err
	}
	out := map[types.UID]string{}
	for _, k := range kinds {
		list, err := mc.Resource(k.gvr).List(w.ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, item := range list.Items {
			if item.Namespace == w.ns || !writtenBy(&item, w.opts.FieldManager) {
				continue
			}
			out[item.UID] = child{kind: k, obj: item}.String()
		}
	}
	return out, nil
}

// checkConditions: every condition is current and has a CamelCase reason, Ready
// agrees with the sub-conditions, and passes do not flap them.
func (w *world) checkConditions() error {
	r, err := w.startAndConverge(nil)
	if err != nil {
		return err
	}
	var errs []error
	for _, cr := range w.crs {
		cur, err := w.read(cr)
		if err != nil {
			return err
		}
		errs = append(errs, w.conditionRules(cur))
		errs = append(errs, w.stable(cr, []*replica{r}))
	}
	return errors.Join(errs...)
}

// conditionRules checks one CR's conditions as stored.
func (w *world) conditionRules(cr *unstructured.Unstructured) error {
	conds, err := conditionsOf(cr)
	if err != nil {
		return w.violation(describe(cr), "status.conditions", "store conditions as a list of metav1.Condition", "%v", err)
	}
	var errs []error
	gen := cr.GetGeneration()
	for _, c := range conds {
		field := "status.conditions[" + c.Type + "]"
		if c.ObservedGeneration != gen {
			errs = append(errs, w.violation(describe(cr), field+".observedGeneration",
				"set ObservedGeneration to metadata.generation on every condition you write (reconcile.MarkTrue, MarkFalse and SetCondition do)",
				"is %d, metadata.generation is %d", c.ObservedGeneration, gen))
		}
		if err := reconcile.ValidateReason(c.Reason); err != nil {
			errs = append(errs, w.violation(describe(cr), field+".reason",
				"use a CamelCase reason (letters and digits, no spaces, dashes or dots) and put the details into the message",
				"%v", err))
		}
	}
	subs := w.opts.SubConditions
	if len(subs) == 0 {
		for _, c := range conds {
			if c.Type != reconcile.ConditionReady {
				subs = append(subs, c.Type)
			}
		}
	}
	readyCond := meta.FindStatusCondition(conds, reconcile.ConditionReady)
	if readyCond == nil {
		return errors.Join(append(errs, w.violation(describe(cr), "status.conditions[Ready]",
			"aggregate Ready from the sub-conditions (reconcile.PassOptions.ReadyCondition)", "missing"))...)
	}
	allTrue := true
	var notTrue []string
	for _, s := range subs {
		c := meta.FindStatusCondition(conds, s)
		if c == nil || c.Status != metav1.ConditionTrue {
			allTrue = false
			status := "missing"
			if c != nil {
				status = string(c.Status) + " (" + c.Reason + ")"
			}
			notTrue = append(notTrue, s+" "+status)
		}
	}
	isTrue := readyCond.Status == metav1.ConditionTrue
	if isTrue != allTrue {
		problem := fmt.Sprintf("Ready is %s while every sub-condition %v is True", readyCond.Status, subs)
		if !allTrue {
			problem = fmt.Sprintf("Ready is True while %s", strings.Join(notTrue, ", "))
		}
		errs = append(errs, w.violation(describe(cr), "status.conditions[Ready].status",
			"derive Ready from the sub-conditions alone (reconcile.AggregateReady; list them in reconcile.PassOptions.SubConditions "+
				"and in Options.SubConditions)", "%s", problem))
	}
	return errors.Join(errs...)
}

// conditionsKey renders the conditions as compared for flapping.
func conditionsKey(cr *unstructured.Unstructured) []string {
	conds, _ := conditionsOf(cr)
	out := make([]string, 0, len(conds))
	for _, c := range conds {
		out = append(out, fmt.Sprintf("%s=%s reason=%s message=%q since=%s", c.Type, c.Status, c.Reason, c.Message,
			c.LastTransitionTime.UTC().Format(time.RFC3339)))
	}
	slices.Sort(out)
	return out
}

// stable runs quietPasses passes of cr on each replica in turn and reports conditions
// that change between them.
func (w *world) stable(cr *unstructured.Unstructured, replicas []*replica) error {
	cur, err := w.read(cr)
	if err != nil {
		return err
	}
	want := conditionsKey(cur)
	for i := range quietPasses * len(replicas) {
		r := replicas[i%len(replicas)]
		w.pass(r, cr)
		cur, err := w.read(cr)
		if err != nil {
			return err
		}
		if got := conditionsKey(cur); !slices.Equal(got, want) {
			by := ""
			if len(replicas) > 1 {
				by = " of instance " + r.name
			}
			return w.violation(describe(cr), "status.conditions",
				"set conditions from the observed state alone, so that every pass (and every replica) computes the same ones; "+
					"no pass counters, times or instance names in reasons and messages",
				"conditions changed on converged pass %d%s:\nbefore:\n  %s\nafter:\n  %s", i+1, by,
				strings.Join(want, "\n  "), strings.Join(got, "\n  "))
		}
	}
	return nil
}

// resultWithError reports every pass that returned a result together with an error.
func (w *world) resultWithError() error {
	var errs []error
	seen := map[types.NamespacedName]bool{}
	for _, p := range w.allPasses() {
		res, err, done := p.outcome()
		if !done || err == nil || res.IsZero() || seen[p.key] {
			continue
		}
		seen[p.key] = true
		errs = append(errs, w.violation(w.kindOf(p.key)+" "+p.key.String(), "",
			"return either a result or an error: controller-runtime ignores the result when the error is set "+
				"(reconcile.RunPass drops it for you)",
			"a pass returned %+v together with the error %q", res, err.Error()))
	}
	return errors.Join(errs...)
}

// kindOf returns the kind of the CR named key.
func (w *world) kindOf(key types.NamespacedName) string {
	for _, cr := range w.crs {
		if client.ObjectKeyFromObject(cr) == key {
			return cr.GetKind()
		}
	}
	return "object"
}

// checkErrors: no pass returns a result with an error; a fault on each verb leaves the
// status written, deletes nothing and the next passes converge to the same children.
func (w *world) checkErrors() error {
	r, err := w.startAndConverge(nil)
	if err != nil {
		return err
	}
	if _, err := w.children(true); err != nil {
		return err
	}
	var errs []error
	var unexercised []string
	rotation := 0
	for _, verb := range testenv.Verbs() {
		for _, fault := range faultNames {
			fired, err := w.faultCase(r, verb, fault, &rotation)
			if err != nil {
				errs = append(errs, err)
				if !errors.Is(err, ErrViolation) {
					return errors.Join(errs...)
				}
			}
			if !fired {
				unexercised = append(unexercised, string(verb)+"/"+fault)
			}
		}
	}
	if len(unexercised) > 0 {
		w.t.Logf("conformance: no pass sent a request these faults could hit (not exercised): %s", strings.Join(unexercised, " "))
	}
	errs = append(errs, w.resultWithError())
	return errors.Join(errs...)
}

// needsCreate lists the verbs a perturbation must delete a child for: the re-creation
// and the status flip exercise them.
var needsCreate = []testenv.Verb{testenv.VerbCreate, testenv.VerbApply, testenv.VerbStatusUpdate, testenv.VerbStatusPatch}

// faultCase arms one fault, perturbs the converged world so that the operator has to
// write, drives passes until the fault fires, and then checks what the faulted pass and
// the convergence after it did.
func (w *world) faultCase(r *replica, verb testenv.Verb, fault string, rotation *int) (bool, error) {
	before, err := w.children(false)
	if err != nil {
		return false, err
	}
	deleted := ""
	since := time.Now() // a pass the perturbation wakes may start before the fault is armed and still meet it
	if err := w.perturb(before); err != nil {
		return false, err
	}
	if slices.Contains(needsCreate, verb) && len(before) > 0 {
		c := before[*rotation%len(before)]
		*rotation++
		if err := w.deleteChild(c); err != nil {
			return false, err
		}
		deleted = c.id()
	}
	w.faults.arm(verb, fault)
	// Drive passes until the fault fires, or until the operator has repaired the
	// perturbation without sending a request the fault could hit.
	for i := 0; i < w.opts.MaxPasses && w.faults.firedIn() == nil; i++ {
		wrote := false
		for _, cr := range w.crs {
			p := w.pass(r, cr)
			wrote = wrote || slices.ContainsFunc(p.sent(), request.isWrite)
			if w.faults.firedIn() != nil {
				break
			}
		}
		if w.faults.firedIn() != nil {
			break
		}
		if !wrote {
			done, err := w.repaired(before, deleted)
			if err != nil {
				return false, err
			}
			if done {
				break
			}
		}
		time.Sleep(poll)
	}
	fp, req := w.faults.disarm()
	var errs []error
	if fp != nil {
		for !func() bool { _, _, done := fp.outcome(); return done }() {
			time.Sleep(10 * time.Millisecond)
		}
		errs = append(errs, w.faultedPass(fp, req, verb, fault))
	}
	mid, err := w.children(false)
	if err != nil {
		return fp != nil, err
	}
	if err := w.converge(r); err != nil {
		return fp != nil, fmt.Errorf("after a %s on %s: %w", fault, verb, err)
	}
	after, err := w.children(false)
	if err != nil {
		return fp != nil, err
	}
	byID := map[string]child{}
	for _, c := range after {
		byID[c.id()] = c
	}
	errs = append(errs, w.deletedByPasses(since, append(before, mid...), verb, fault)...)
	for _, set := range [][]child{before, mid} {
		for _, c := range set {
			if c.id() == deleted {
				continue
			}
			a, ok := byID[c.id()]
			switch {
			case !ok:
				errs = append(errs, w.violation(c.String(), "", "a failed pass must not delete what the CR owns: return the error and retry the write on the next pass",
					"deleted after a %s on %s", fault, verb))
			case a.obj.UID != c.obj.UID:
				errs = append(errs, w.violation(c.String(), "metadata.uid", "a failed pass must not delete what the CR owns: return the error and retry the write on the next pass",
					"deleted and re-created after a %s on %s (UID %s -> %s)", fault, verb, c.obj.UID, a.obj.UID))
			}
		}
		if len(errs) > 0 {
			break
		}
	}
	return fp != nil, errors.Join(errs...)
}

// deletedByPasses reports every child of children that a pass started since from
// deleted (a DELETE the API server answered 2xx).
func (w *world) deletedByPasses(from time.Time, children []child, verb testenv.Verb, fault string) []error {
	var errs []error
	seen := map[string]bool{}
	for _, p := range w.allPasses() {
		if p.start.Before(from) {
			continue
		}
		for _, r := range p.sent() {
			if r.verb != testenv.VerbDelete || !statusOK(r.status) {
				continue
			}
			for _, c := range children {
				if c.kind.gvr.Resource == r.resource && c.obj.Namespace == r.namespace && c.obj.Name == r.name && !seen[c.id()] {
					seen[c.id()] = true
					errs = append(errs, w.violation(c.String(), "",
						"a failed pass must not delete what the CR owns: return the error and retry the write on the next pass",
						"deleted by a pass of %s after a %s on %s (%s)", p.key, fault, verb, r.String()))
				}
			}
		}
	}
	return errs
}

// repaired reports whether the children of before are back as they were: each
// perturbed label restored and the deleted child re-created.
func (w *world) repaired(before []child, deleted string) (bool, error) {
	now, err := w.children(false)
	if err != nil {
		return false, err
	}
	byID := map[string]child{}
	for _, c := range now {
		byID[c.id()] = c
	}
	for _, c := range before {
		cur, ok := byID[c.id()]
		if !ok {
			return false, nil
		}
		if c.id() == deleted {
			continue
		}
		if key, value, ok := w.ownedLabel(c); ok && cur.obj.Labels[key] != value {
			return false, nil
		}
	}
	return true, nil
}

// faultedPass checks the pass that met the fault: it must not hide the failure. It
// shows it when it returned an error (controller-runtime logs it, counts it and runs
// the pass again with backoff; reconcile.RunPass returns the error of a failing step,
// whether or not the step's condition has a False reason), when it sent the failed
// request again and that one succeeded (the pass recovered), when it wrote the CR's
// status after the fault, or when the stored status no longer reports Ready=True. A
// pass that met the fault and returned no error, recovered nothing, wrote no status
// and left Ready=True hid it: nothing runs it again, and nothing shows it. A fault on
// the read of the CR or on the status write itself is left out: the pass could not
// write then.
func (w *world) faultedPass(p *pass, faulted request, verb testenv.Verb, fault string) error {
	res, err, _ := p.outcome()
	if err != nil {
		return nil
	}
	var cr *unstructured.Unstructured
	for _, c := range w.crs {
		if client.ObjectKeyFromObject(c) == p.key {
			cr = c
		}
	}
	if cr == nil || faulted.subresource == "status" || (faulted.name == cr.GetName() && faulted.verb == testenv.VerbGet) {
		return nil
	}
	after := false
	for _, r := range p.sent() {
		if r.injected != "" {
			after = true
			continue
		}
		if !after || !statusOK(r.status) {
			continue
		}
		if r.method == faulted.method && r.path == faulted.path && r.verb == faulted.verb {
			return nil // sent again, and served
		}
		if r.subresource == "status" && r.name == cr.GetName() && r.isWrite() {
			return nil
		}
	}
	cur, rerr := w.read(cr)
	if rerr != nil {
		return fmt.Errorf("conformance: read %s: %w", describe(cr), rerr)
	}
	conds, _ := conditionsOf(cur)
	if !meta.IsStatusConditionTrue(conds, reconcile.ConditionReady) {
		return nil // the status already shows a problem
	}
	return w.violation(describe(cr), "status.conditions",
		"return the error of a failed request (controller-runtime retries the pass with backoff; reconcile.RunPass returns "+
			"a failing step's error), or set the step's condition False (reconcile.MarkFalse), or retry the request "+
			"within the pass; never drop it",
		"the pass that met a %s on %s (%s) returned no error (result %+v), did not send the request again, wrote no status, "+
			"and the CR still reports Ready=True: the failure is hidden and nothing retries it",
		fault, verb, faulted.String(), res)
}

// perturb changes an operator-owned label on every child, as someone else would.
func (w *world) perturb(children []child) error {
	for _, c := range children {
		key, _, ok := w.ownedLabel(c)
		if !ok {
			continue
		}
		if err := w.setLabel(c, key, driftValue); err != nil {
			return err
		}
	}
	return nil
}

// driftValue is the value the suite sets an operator-owned label to.
const driftValue = "conformance-drift"

// setLabel sets a label of c as another client would (a merge patch under the field
// manager "conformance-drift").
func (w *world) setLabel(c child, key, value string) error {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(c.kind.gvk)
	obj.SetNamespace(c.obj.Namespace)
	obj.SetName(c.obj.Name)
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, key, value)
	if err := w.c.Patch(w.ctx, obj, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(driftValue)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("conformance: set label %s of %s: %w", key, c, err)
	}
	return nil
}

// deleteChild deletes c as another client would.
func (w *world) deleteChild(c child) error {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(c.kind.gvk)
	obj.SetNamespace(c.obj.Namespace)
	obj.SetName(c.obj.Name)
	if err := w.c.Delete(w.ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); ignoreNotFound(err) != nil {
		return fmt.Errorf("conformance: delete %s: %w", c, err)
	}
	return nil
}

// getChild reads c's current metadata; nil when it does not exist.
func (w *world) getChild(c child) (*metav1.PartialObjectMetadata, error) {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(c.kind.gvk)
	err := w.c.Get(w.ctx, client.ObjectKey{Namespace: c.obj.Namespace, Name: c.obj.Name}, obj)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

// ownersOf returns the CR that controls or claims c, or every CR when none does.
func (w *world) ownersOf(c child) []*unstructured.Unstructured {
	if o := w.ownerOf(c); o != nil {
		return []*unstructured.Unstructured{o}
	}
	return w.crs
}

// repair runs passes of the CRs that own c until done reports the repair, within
// MaxPasses passes and the timeout; it returns the number of passes it ran.
func (w *world) repair(r *replica, c child, done func(*metav1.PartialObjectMetadata) bool) (int, bool, error) {
	owners := w.ownersOf(c)
	deadline := time.Now().Add(w.opts.Timeout)
	for n := 1; n <= w.opts.MaxPasses && time.Now().Before(deadline); n++ {
		for _, cr := range owners {
			w.pass(r, cr)
		}
		cur, err := w.getChild(c)
		if err != nil {
			return n, false, err
		}
		if done(cur) {
			return n, true, nil
		}
		time.Sleep(poll)
	}
	return w.opts.MaxPasses, false, nil
}

// checkDrift: a child whose operator-owned label someone else changed, or that someone
// else deleted, is restored by the next passes; a write-once child is held to the
// promise of driftWriteOnce instead.
func (w *world) checkDrift() error {
	r, err := w.startAndConverge(nil)
	if err != nil {
		return err
	}
	children, err := w.children(true)
	if err != nil {
		return err
	}
	if len(children) == 0 {
		return w.violation("", "Options.FieldManager", "set Options.FieldManager to the field manager your operator writes under",
			"no child written by %q in namespace %s to drift", w.opts.FieldManager, w.ns)
	}
	var errs []error
	for i, c := range children {
		if i > 0 { // drift each child from a converged world: a pass may stop at a step that waits
			if err := w.converge(r); err != nil {
				return errors.Join(append(errs, err)...)
			}
		}
		if reason := w.writeOnce(c); reason != "" {
			found, err := w.driftWriteOnce(r, c, reason)
			errs = append(errs, found...)
			if err != nil {
				return errors.Join(append(errs, err)...)
			}
			continue
		}
		if key, value, ok := w.ownedLabel(c); ok {
			if err := w.setLabel(c, key, driftValue); err != nil {
				return err
			}
			n, ok, err := w.repair(r, c, func(o *metav1.PartialObjectMetadata) bool { return o != nil && o.Labels[key] == value })
			if err != nil {
				return err
			}
			if !ok {
				errs = append(errs, w.violation(c.String(), "metadata.labels["+key+"]",
					"re-apply the desired state on every pass (apply.EnsureObject, server-side apply with ForceOwnership) "+
						"instead of creating the object only when it is missing",
					"set to %q by another client and not restored to %q within %d passes", driftValue, value, n))
			}
		} else {
			w.t.Logf("conformance: %s has no label owned by %q to drift", c, w.opts.FieldManager)
		}
		if err := w.deleteChild(c); err != nil {
			return err
		}
		missing, err := w.recreated(r, c)
		if err != nil {
			return err
		}
		if missing != nil {
			errs = append(errs, missing)
		}
	}
	return errors.Join(errs...)
}

// recreated waits, running passes of c's owner, until c, deleted by another client,
// is back (a new UID, not being deleted); a child that is not is a violation, returned
// as the first result. The second is the error of a check that could not run.
func (w *world) recreated(r *replica, c child) (*Violation, error) {
	n, ok, err := w.repair(r, c, func(o *metav1.PartialObjectMetadata) bool {
		return o != nil && o.UID != c.obj.UID && o.DeletionTimestamp == nil
	})
	if err != nil || ok {
		return nil, err
	}
	return w.violation(c.String(), "",
		"ensure every child on every pass; a pass must not skip a step because it succeeded before",
		"deleted by another client and not re-created within %d passes", n), nil
}

// writeOnceFix is what to change about a write-once child the operator wrote again.
const writeOnceFix = "create a write-once child once and leave it alone: job.RunJob runs a finished Job again only when its " +
	"re-run key changed, secrets.EnsureGeneratedSecret never writes a Secret that holds its credential, " +
	"config.CreateImmutableConfigMap and CreateImmutableSecret never rewrite; a changed label is no reason to write"

// driftWriteOnce drifts a write-once child (reason says why it is one). An
// operator-owned label set to another value by another client may stay so, but the
// passes that follow, until the CRs are Ready again, must leave the child itself
// alone: it keeps its UID (a Job is not run again, a credential not minted again) and,
// a ConfigMap or Secret, its data. Deleted by another client, the child is re-created
// (a Job's deletion runs it again, as job.RunJob documents); a Secret that comes back
// with other data (a credential generated anew, secrets.EnsureGeneratedSecret without
// GeneratedSecret.RestoreFrom or with an empty backup) must have been reported: a log
// line or an Event the operator wrote after the deletion names it.
func (w *world) driftWriteOnce(r *replica, c child, reason string) ([]error, error) {
	before, err := w.fullChild(c)
	if err != nil || before == nil {
		return nil, err
	}
	var errs []error
	if key, _, ok := w.operatorLabel(c); ok {
		if err := w.setLabel(c, key, driftValue); err != nil {
			return nil, err
		}
		for range quietPasses {
			for _, cr := range w.ownersOf(c) {
				w.pass(r, cr)
			}
			time.Sleep(poll)
		}
		if err := w.converge(r); err != nil {
			return nil, err
		}
		cur, err := w.fullChild(c)
		if err != nil {
			return nil, err
		}
		switch {
		case cur == nil || cur.GetUID() != before.GetUID():
			errs = append(errs, w.violation(c.String(), "metadata.uid", writeOnceFix,
				"write-once (%s): its label %s was set to %q by another client, and the operator deleted the object%s",
				reason, key, driftValue, recreatedAs(cur)))
		default:
			for _, field := range changedData(before, cur) {
				errs = append(errs, w.violation(c.String(), field, writeOnceFix,
					"write-once (%s): its label %s was set to %q by another client, and the operator wrote a new value",
					reason, key, driftValue))
			}
		}
	} else {
		w.t.Logf("conformance: %s (write-once: %s) has no label owned by %q to drift", c, reason, w.opts.FieldManager)
	}
	logsFrom := len(w.logs.all())
	events, err := w.eventVersions()
	if err != nil {
		return errs, err
	}
	if err := w.deleteChild(c); err != nil {
		return errs, err
	}
	missing, err := w.recreated(r, c)
	if err != nil {
		return errs, err
	}
	if missing != nil {
		return append(errs, missing), nil
	}
	cur, err := w.fullChild(c)
	if err != nil || cur == nil {
		return errs, err
	}
	changed := changedData(before, cur)
	if c.kind.gvk.Group != "" || c.kind.gvk.Kind != "Secret" || len(changed) == 0 {
		return errs, nil
	}
	reported, err := w.reported(c, logsFrom, events)
	if err != nil {
		return errs, err
	}
	if reported {
		w.t.Logf("conformance: %s (write-once: %s), deleted, came back with a new value of %s, which the operator reported",
			c, reason, strings.Join(changed, ", "))
		return errs, nil
	}
	for _, field := range changed {
		errs = append(errs, w.violation(c.String(), field,
			"restore a lost credential from its backup (secrets.GeneratedSecret.RestoreFrom), or report the new one: "+
				"secrets.EnsureGeneratedSecret logs \"generated credential Secret\" with the Secret's namespace/name through the "+
				"pass's logger (log.FromContext); an operator that mints credentials itself must log or record an Event naming the Secret",
			"write-once (%s): deleted by another client and re-created with a new value, and no log line or Event of the "+
				"operator names the Secret: a credential was minted silently", reason))
	}
	return errs, nil
}

// recreatedAs renders what took the place of a deleted object.
func recreatedAs(cur *unstructured.Unstructured) string {
	if cur == nil {
		return ""
	}
	return fmt.Sprintf(" and created it again (UID %s)", cur.GetUID())
}

// changedData lists the keys ("data[key]", "binaryData[key]") whose values differ
// between two versions of a ConfigMap or Secret; nil for other kinds. It never
// returns a value.
func changedData(before, after *unstructured.Unstructured) []string {
	gvk := before.GroupVersionKind()
	if gvk.Group != "" || (gvk.Kind != "ConfigMap" && gvk.Kind != "Secret") {
		return nil
	}
	var out []string
	for _, field := range []string{"data", "binaryData"} {
		b, _, _ := unstructured.NestedMap(before.Object, field)
		a, _, _ := unstructured.NestedMap(after.Object, field)
		for k, v := range b {
			if av, ok := a[k]; !ok || av != v {
				out = append(out, field+"["+k+"]")
			}
		}
		for k := range a {
			if _, ok := b[k]; !ok {
				out = append(out, field+"["+k+"]")
			}
		}
	}
	slices.Sort(out)
	return out
}

// eventVersions identifies every Event of the namespace as it is now (UID and
// resourceVersion), core and events.k8s.io.
func (w *world) eventVersions() (map[string]bool, error) {
	out := map[string]bool{}
	core := &corev1.EventList{}
	if err := w.c.List(w.ctx, core, client.InNamespace(w.ns)); err != nil {
		return nil, fmt.Errorf("conformance: list Events of %s: %w", w.ns, err)
	}
	for _, e := range core.Items {
		out[string(e.UID)+"@"+e.ResourceVersion] = true
	}
	ev := &eventsv1.EventList{}
	if err := w.c.List(w.ctx, ev, client.InNamespace(w.ns)); err != nil {
		return nil, fmt.Errorf("conformance: list events.k8s.io Events of %s: %w", w.ns, err)
	}
	for _, e := range ev.Items {
		out[string(e.UID)+"@"+e.ResourceVersion] = true
	}
	return out, nil
}

// reported reports whether the operator named c after the fact: a log line from
// logsFrom on holds "namespace/name", or an Event written since events (one not
// among them) is about c or names it in its message. Events reach the API server
// asynchronously: it looks again for a moment.
func (w *world) reported(c child, logsFrom int, events map[string]bool) (bool, error) {
	nsName := c.obj.Namespace + "/" + c.obj.Name
	for deadline := time.Now().Add(2 * time.Second); ; {
		if slices.ContainsFunc(w.logs.all()[logsFrom:], func(l string) bool { return strings.Contains(l, nsName) }) {
			return true, nil
		}
		core := &corev1.EventList{}
		if err := w.c.List(w.ctx, core, client.InNamespace(w.ns)); err != nil {
			return false, fmt.Errorf("conformance: list Events of %s: %w", w.ns, err)
		}
		for _, e := range core.Items {
			if !events[string(e.UID)+"@"+e.ResourceVersion] &&
				(e.InvolvedObject.Kind == c.kind.gvk.Kind && e.InvolvedObject.Name == c.obj.Name || strings.Contains(e.Message, c.obj.Name)) {
				return true, nil
			}
		}
		ev := &eventsv1.EventList{}
		if err := w.c.List(w.ctx, ev, client.InNamespace(w.ns)); err != nil {
			return false, fmt.Errorf("conformance: list events.k8s.io Events of %s: %w", w.ns, err)
		}
		for _, e := range ev.Items {
			if !events[string(e.UID)+"@"+e.ResourceVersion] &&
				(e.Regarding.Kind == c.kind.gvk.Kind && e.Regarding.Name == c.obj.Name || strings.Contains(e.Note, c.obj.Name)) {
				return true, nil
			}
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		time.Sleep(4 * poll)
	}
}

// checkDeletion: deleting the CRs leaves no finalizer and the garbage collector takes
// the children.
func (w *world) checkDeletion() error {
	if len(w.opts.Env.Processes()) == 0 {
		return w.violation("", "Options.Env",
			"start the Env with testenv.Options{Controllers: true} (in TestMain), or skip Deletion with a reason",
			"the Env runs without controllers, so no garbage collector would take the children")
	}
	if _, err := w.startAndConverge(nil); err != nil {
		return err
	}
	children, err := w.children(true)
	if err != nil {
		return err
	}
	for _, cr := range w.crs {
		if err := w.c.Delete(w.ctx, cr); ignoreNotFound(err) != nil {
			return fmt.Errorf("conformance: delete %s: %w", describe(cr), err)
		}
	}
	var errs []error
	for _, cr := range w.crs {
		var last *unstructured.Unstructured
		err := w.wait(func() (bool, error) {
			cur, err := w.read(cr)
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			last = cur
			return false, err
		})
		if err != nil && last != nil {
			errs = append(errs, w.violation(describe(cr), "metadata.finalizers",
				"on the deletion pass (deletionTimestamp set) clean up and then remove your finalizer (reconcile.RemoveFinalizer); "+
					"a finalizer that stays blocks the deletion for ever",
				"still present %s after its deletion, with finalizers %v", w.opts.Timeout, last.GetFinalizers()))
		} else if err != nil {
			return err
		}
	}
	for _, c := range children {
		var left *metav1.PartialObjectMetadata
		err := w.wait(func() (bool, error) {
			cur, err := w.getChild(c)
			left = cur
			return cur == nil || cur.UID != c.obj.UID, err
		})
		if err != nil && left != nil {
			errs = append(errs, w.violation(c.String(), "metadata.ownerReferences",
				"make the CR the child's controller owner (apply.EnsureObject does), so that the garbage collector deletes it "+
					"with the CR; children on target clusters must be swept by the CR's finalizer",
				"not garbage-collected %s after its CR was deleted (owner references: %v)", w.opts.Timeout, left.OwnerReferences))
		} else if err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

// wait polls cond until it holds, within the timeout.
func (w *world) wait(cond func() (bool, error)) error {
	deadline := time.Now().Add(w.opts.Timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("conformance: not within %s: %w", w.opts.Timeout, context.DeadlineExceeded)
		}
		time.Sleep(poll)
	}
}

// checkValidation: every invalid sample is refused at admission with a message that
// names its field.
func (w *world) checkValidation() error {
	if len(w.opts.Invalid) == 0 {
		return w.violation("", "Options.Invalid",
			"list CRs that admission must refuse, each with the field the refusal names, or skip Validation with a reason",
			"no invalid sample to try")
	}
	if _, err := w.start("a", nil); err != nil { // its webhooks, if it serves any
		return err
	}
	var errs []error
	for _, s := range w.opts.Invalid {
		u, err := w.toUnstructured(s.Object)
		if err != nil {
			return err
		}
		err = w.c.Create(w.ctx, u)
		switch {
		case err == nil:
			_ = w.c.Delete(w.ctx, u)
			errs = append(errs, w.violation(describe(u), s.Field,
				"refuse it at admission: a +kubebuilder:validation marker on the field, an x-kubernetes-validations (CEL) rule, "+
					"or a validating webhook",
				"the invalid sample was accepted"))
		case !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) && !apierrors.IsBadRequest(err):
			return fmt.Errorf("conformance: create invalid sample %s: %w", describe(u), err)
		case !strings.Contains(err.Error(), s.Field):
			errs = append(errs, w.violation(describe(u), s.Field,
				"make the refusal name the field: CRD validation and CEL rules do (fieldPath on a rule at a parent); "+
					"a webhook should return field.ErrorList errors for it",
				"refused, but the message does not name %s: %v", s.Field, err))
		}
	}
	return errors.Join(errs...)
}

// checkSecrets: no value of a Secret of the namespace shows in the operator's logs,
// Events, the CRs' status or its metrics.
func (w *world) checkSecrets() error {
	r, err := w.startAndConverge(nil)
	if err != nil {
		return err
	}
	for _, cr := range w.crs {
		for range quietPasses {
			w.pass(r, cr)
		}
	}
	var leaks []error
	// Events reach the API server asynchronously: look again for a moment.
	for deadline := time.Now().Add(2 * time.Second); ; {
		values, err := w.secretValues()
		if err != nil {
			return err
		}
		shown, err := w.exposures()
		if err != nil {
			return err
		}
		leaks = nil
		for _, v := range values {
			for _, e := range shown {
				if slices.ContainsFunc(v.forms, func(f string) bool { return strings.Contains(e.text, f) }) {
					leaks = append(leaks, w.violation(v.secret, "data["+v.key+"]",
						"never put a Secret's data into a log, an event, a condition or a metric; name the Secret and its key instead",
						"its value appears in the operator's %s", e.where))
				}
			}
		}
		if len(leaks) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(4 * poll)
	}
	return errors.Join(leaks...)
}

// checkLeastPrivilege: the operator converges as a user bound to its generated
// ClusterRoles alone.
func (w *world) checkLeastPrivilege() error {
	if len(w.opts.ClusterRolePaths) == 0 {
		return w.violation("", "Options.ClusterRolePaths",
			"point Options.ClusterRolePaths at the ClusterRoles controller-gen generates (config/rbac/role.yaml), "+
				"or skip LeastPrivilege with a reason",
			"no ClusterRole to run the operator with")
	}
	var roles []*rbacv1.ClusterRole
	for _, p := range w.opts.ClusterRolePaths {
		rs, err := testenv.LoadClusterRoles(p)
		if err != nil {
			return err
		}
		roles = append(roles, rs...)
	}
	cfg := w.opts.Env.ConfigAs(w.t, "conformance", roles...)
	_, err := w.startAndConverge(cfg)
	forbidden := w.forbidden()
	if err == nil {
		if len(forbidden) > 0 {
			w.t.Logf("conformance: the operator converged; requests it was refused on the way: %v", forbidden)
		}
		return nil
	}
	if errors.Is(err, ErrViolation) && len(forbidden) > 0 {
		var b strings.Builder
		for _, r := range forbidden {
			b.WriteString("\n  " + r.String())
		}
		err = errors.Join(err, w.violation("", "ClusterRole rules",
			"add +kubebuilder:rbac markers for these requests and regenerate "+strings.Join(w.opts.ClusterRolePaths, ", "),
			"the API server refused (403) as the user bound to %s:%s", strings.Join(w.opts.ClusterRolePaths, ", "), b.String()))
	}
	return err
}

// checkTwoReplicas: two instances converge to one set of children, without flapping
// conditions.
func (w *world) checkTwoReplicas() error {
	a, err := w.start("a", nil)
	if err != nil {
		return err
	}
	b, err := w.start("b", nil)
	if err != nil {
		return err
	}
	if err := w.createSamples(); err != nil {
		return err
	}
	if err := w.converge(nil); err != nil {
		return err
	}
	before, err := w.children(true)
	if err != nil {
		return err
	}
	var errs []error
	for _, cr := range w.crs {
		errs = append(errs, w.stable(cr, []*replica{a, b}))
	}
	after, err := w.children(true)
	if err != nil {
		return err
	}
	uids := map[types.UID]bool{}
	for _, c := range before {
		uids[c.obj.UID] = true
	}
	for _, c := range after {
		if !uids[c.obj.UID] {
			errs = append(errs, w.violation(c.String(), "metadata.name",
				"derive every child's name and content from the CR alone, so that two instances write the same object",
				"appeared while the two instances took turns: they do not agree on one set of children"))
		}
	}
	now := map[types.UID]bool{}
	for _, c := range after {
		now[c.obj.UID] = true
	}
	for _, c := range before {
		if !now[c.obj.UID] {
			errs = append(errs, w.violation(c.String(), "",
				"derive every child from the CR alone and never delete one the other instance wrote",
				"deleted or replaced while the two instances took turns"))
		}
	}
	return errors.Join(errs...)
}

// statusOK reports a 2xx status.
func statusOK(code int) bool { return code >= http.StatusOK && code < http.StatusMultipleChoices }
