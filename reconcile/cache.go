package reconcile

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// UncachedObjects lists the kinds an operator built on the SDK should read past its
// manager's cache, for ctrl.Options.Client. With apply.CacheOptions for the cache (it
// caches only the Secrets and ConfigMaps the operator's Applier wrote):
//
//	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
//		Cache:  apply.CacheOptions("keystone-operator"),
//		Client: client.Options{Cache: &client.CacheOptions{DisableFor: reconcile.UncachedObjects()}},
//	})
//
// A manager's client serves every Get and List from an informer, and the first read of
// a kind starts a cluster-wide list and watch of it (only the namespaces of
// cache.Options.DefaultNamespaces when those are set) that holds every object of that
// kind in memory for the life of the process. Two kinds the SDK reads are costly to
// cache that way and are read rarely: Pods and ControllerRevisions. The in-use guard of
// config.PruneImmutableConfigMaps lists them in a namespace only when a prune has
// something to delete; a cluster-wide informer of either (every pod, every StatefulSet
// and DaemonSet template of the cluster) costs far more memory than those LISTs cost
// requests.
//
// Secrets and ConfigMaps are read on every pass, so they belong in the cache, but only
// the operator's own: see apply.CacheOptions. An operator that does not use an Applier
// adds &corev1.Secret{} to this list instead, so it does not hold every Secret of the
// cluster (then each Secret read is one GET). Do not restrict the Secret cache with a
// label selector without an Applier's APIReader: a Secret outside the selector would
// read as not found, and a helper would take it for missing.
//
// The other kinds the SDK reads (the children it applies, Deployments, ReplicaSets, Jobs,
// the ESO and mariadb-operator kinds) are usually watched by the controller anyway
// (Owns), so their informers already exist and reading them from the cache costs nothing
// more.
func UncachedObjects() []client.Object {
	return []client.Object{&corev1.Pod{}, &appsv1.ControllerRevision{}}
}
