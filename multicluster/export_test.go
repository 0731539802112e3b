package multicluster

import (
	"context"
	"slices"
	"sort"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
	mcmulticluster "sigs.k8s.io/multicluster-runtime/pkg/multicluster"
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

// Engaged tells r, as the manager does, that the provider engaged cl under name for
// the life of ctx.
func (r *ClusterResolver) Engaged(ctx context.Context, name string, cl cluster.Cluster) error {
	return disengaged{r}.Engage(ctx, mcmulticluster.ClusterName(name), cl)
}

// TargetFor returns the target the resolver gives for cl under name, as Resolve does
// once the manager handed it cl.
func (r *ClusterResolver) TargetFor(name string, cl cluster.Cluster) (*Target, error) {
	rt, err := r.remoteTarget(name, cl)
	if err != nil {
		return nil, err
	}
	return rt.target, nil
}

// KindMapping is kindMapping: the REST mapping of a kind a target cluster serves.
var KindMapping = kindMapping
