package conformance

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// checkErrors is [CheckErrors]: no pass returns a result with an error; a fault on each
// verb is not hidden, deletes nothing, and the next passes converge to the same children.
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
	for _, verb := range faults.Verbs() {
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

// needsCreate lists the verbs a perturbation must delete a child for: the re-creation
// and the status flip exercise them.
var needsCreate = []faults.Verb{faults.VerbCreate, faults.VerbApply, faults.VerbStatusUpdate, faults.VerbStatusPatch}

// faultCase arms one fault, perturbs the converged world so that the operator has to
// write, drives passes until the fault fires, and then checks what the faulted pass and
// the convergence after it did.
func (w *world) faultCase(r *replica, verb faults.Verb, fault string, rotation *int) (bool, error) {
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
func (w *world) deletedByPasses(from time.Time, children []child, verb faults.Verb, fault string) []error {
	var errs []error
	seen := map[string]bool{}
	for _, p := range w.allPasses() {
		if p.start.Before(from) {
			continue
		}
		for _, r := range p.sent() {
			if r.verb != faults.VerbDelete || !statusOK(r.status) {
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

// faultedPass reports the pass that met the fault when it hid the failure: no error
// returned, the failed request not sent again with success, no status written after the
// fault, and Ready=True still stored (the package documentation, Errors). A fault on the
// read of the CR or on the status write itself is left out: the pass could not write then.
func (w *world) faultedPass(p *pass, faulted request, verb faults.Verb, fault string) error {
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
	if cr == nil || faulted.subresource == "status" || (faulted.name == cr.GetName() && faulted.verb == faults.VerbGet) {
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

// statusOK reports a 2xx status.
func statusOK(code int) bool { return code >= http.StatusOK && code < http.StatusMultipleChoices }
