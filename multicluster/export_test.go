package multicluster

import (
	"slices"
	"sort"
)

// CachedTargets returns the names of the target clusters whose targets the resolver
// keeps, sorted.
func (r *ClusterResolver) CachedTargets() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.targets))
	for name := range r.targets {
		names = append(names, name)
	}
	sort.Strings(names)
	return slices.Clip(names)
}
