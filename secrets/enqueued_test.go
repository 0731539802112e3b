package secrets_test

import (
	"context"
	"sort"
	"strings"
	"sync"

	ctrl "sigs.k8s.io/controller-runtime"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// enqueued records the requests a watch test's controller gets. The test's manager sees
// every namespace, and its initial list replays the objects other tests left (a Secret
// "db" with its reader, a store and its users), so a test reads only its own namespaces.
type enqueued struct {
	mu   sync.Mutex
	reqs []string
}

// reconciler records every request and does nothing else.
func (e *enqueued) reconciler() crreconcile.Func {
	return func(_ context.Context, req crreconcile.Request) (ctrl.Result, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.reqs = append(e.reqs, req.String())
		return ctrl.Result{}, nil
	}
}

// in returns the requests of namespaces, sorted, once each when distinct is set.
func (e *enqueued) in(distinct bool, namespaces ...string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, req := range e.reqs {
		for _, ns := range namespaces {
			if strings.HasPrefix(req, ns+"/") && (!distinct || !seen[req]) {
				seen[req] = true
				out = append(out, req)
			}
		}
	}
	sort.Strings(out)
	return out
}
