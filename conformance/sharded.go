package conformance

import (
	"errors"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ShardLeaseDuration is the Lease duration of the instances the Sharded check starts
// (renewed every eighth of it): short, so that the ring forms within a second.
const ShardLeaseDuration = 4 * time.Second

// checkSharded is [CheckSharded]: three instances started as members of one shard ring
// (RunOptions.Sharded) converge every sample, and no CR is reconciled by two of them
// at the same time.
func (w *world) checkSharded() error {
	w.sharded = true
	for _, name := range []string{"a", "b", "c"} {
		if _, err := w.start(name, nil); err != nil {
			return err
		}
	}
	if err := w.createSamples(); err != nil {
		return err
	}
	if err := w.converge(nil); err != nil {
		return err
	}
	names := map[string]string{} // a CR's key to how violations name it
	for _, cr := range w.crs {
		names[client.ObjectKeyFromObject(cr).String()] = describe(cr)
	}
	var errs []error
	reported := map[string]bool{} // one violation per CR
	passes := w.allPasses()
	for i, p := range passes {
		for _, q := range passes[i+1:] {
			if p.direct || q.direct || p.key != q.key || p.replica == q.replica {
				continue
			}
			if !reported[p.key.String()] && p.start.Before(q.finished()) && q.start.Before(p.finished()) {
				reported[p.key.String()] = true
				errs = append(errs, w.violation(names[p.key.String()], "",
					"run the operator on multicluster.RunOperator with RunOptions.OperatorOptions (its Sharded), or gate its reconciler with shard.Gate",
					"reconciled by instances %s and %s at the same time", p.replica, q.replica))
			}
		}
	}
	return errors.Join(errs...)
}

// finished is when the pass ended, now while it runs.
func (p *pass) finished() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		return time.Now()
	}
	return p.end
}
