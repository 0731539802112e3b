package reconcile

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// UncachedObjects lists the kinds an operator built on the SDK should read past its
// manager's cache, for ctrl.Options.Client:
//
//	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
//		Client: client.Options{Cache: &client.CacheOptions{DisableFor: reconcile.UncachedObjects()}},
//	})
//
// A manager's client serves every Get and List from an informer, and the first read of
// a kind starts a cluster-wide list and watch of it (only the namespaces of
// cache.Options.DefaultNamespaces when those are set) that holds every object of that
// kind in memory for the life of the process. Three kinds the SDK reads are costly to
// cache that way:
//
//   - Secrets: secrets.EnsureGeneratedSecret, GetSecretValue, IsSecretReady and the
//     database password read one Secret by name. Caching them would hold every Secret of
//     the cluster (every service account token and TLS key) in the operator's memory and
//     need list and watch on all of them. Read past the cache, each read is one GET.
//     Do not restrict the Secret cache with a label selector instead: a Secret outside
//     the selector then reads as not found, and a helper would take it for missing.
//   - Pods and ControllerRevisions: the in-use guard of config.PruneImmutableConfigMaps
//     lists them in a namespace when a prune has something to delete; a cluster-wide
//     informer of either (every pod, every StatefulSet and DaemonSet template of the
//     cluster) costs far more memory than those LISTs cost requests.
//
// The other kinds the SDK reads (the children it applies, Deployments, ReplicaSets, Jobs,
// the ESO and mariadb-operator kinds) are usually watched by the controller anyway
// (Owns), so their informers already exist and reading them from the cache costs nothing
// more. The
// permissions each package needs, list and watch included, are in the ClusterRoles
// under rbac/ in the SDK's repository.
func UncachedObjects() []client.Object {
	return []client.Object{&corev1.Secret{}, &corev1.Pod{}, &appsv1.ControllerRevision{}}
}
