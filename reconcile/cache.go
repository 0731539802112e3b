package reconcile

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// UncachedObjects lists the kinds an operator built on the SDK should read past its
// manager's cache, for ctrl.Options.Client: Pods and ControllerRevisions (the package
// documentation, "What to read past the cache"). With apply.CacheOptions for the cache:
//
//	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
//		Cache:  apply.CacheOptions("my-operator"),
//		Client: client.Options{Cache: &client.CacheOptions{DisableFor: reconcile.UncachedObjects()}},
//	})
func UncachedObjects() []client.Object {
	return []client.Object{&corev1.Pod{}, &appsv1.ControllerRevision{}}
}
