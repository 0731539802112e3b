package conformance

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// checkDrift is [CheckDrift]: a child whose operator-owned label another client changed,
// or that another client deleted, is repaired by the next passes; a write-once child is
// held to driftWriteOnce instead.
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

// recreated runs passes of c's owner until c, deleted by another client, is back (a new
// UID, not being deleted). It returns the violation when it is not, and an error when
// the check could not run.
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

// driftWriteOnce drifts a write-once child (reason says why it is one): with a drifted
// label it keeps its UID and data until the CRs are Ready again; deleted, it is
// re-created, and a Secret that comes back with other data must have been reported by a
// log line or an Event naming it (the package documentation, Drift).
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
