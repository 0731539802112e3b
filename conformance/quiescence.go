package conformance

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// checkQuiescence is [CheckQuiescence]: once converged, a pass writes nothing and moves
// no resourceVersion (with ExpectNoRequests: sends nothing at all).
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
