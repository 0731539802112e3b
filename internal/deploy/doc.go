// Package deploy installs an operator's kustomize configuration (kubebuilder's
// config/default layout) into a cluster and takes it out again, the way `make deploy`
// and `make undeploy` do, without kustomize or kubectl on the machine.
//
// [Build] runs kustomize (krusty) on a directory of the local disk and returns the
// objects it renders, with the manager's image placeholder (PlaceholderImage,
// "controller:latest") set to the image given: the override is an images entry added
// in memory to the directory's kustomization, so the files on disk are never changed
// and the kustomization's own replacements (such as an environment variable copied
// from the manager's image) see the image given.
//
// [Apply] applies the objects server-side under the field manager [FieldManager]:
// Namespaces and CustomResourceDefinitions first, then, once every CRD is
// Established, the rest in the order Build returned them. A field another manager owns
// is a conflict, reported with the object and the field managers; ApplyOptions.ForceConflicts
// takes such fields over.
//
// [Delete] undoes an Apply: in reverse order it deletes each object whose
// managedFields show an apply by [FieldManager], and skips (and reports) every object
// it finds that [FieldManager] never applied, so an object of the same name that
// someone else made stays. Objects already gone are not an error.
//
//	objs, err := deploy.Build("examples/quickstart/config/default", deploy.BuildOptions{Image: "registry.example/memo:v1"})
//	if err != nil {
//		return err
//	}
//	return deploy.Apply(ctx, c, objs, deploy.ApplyOptions{})
package deploy
