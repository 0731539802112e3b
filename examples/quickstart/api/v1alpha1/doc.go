// Package v1alpha1 holds the Memo custom resource of the quick-start operator: the
// settings it renders into an INI file, the image and replica count of the Deployment
// that mounts it, and a status of conditions. `make generate` writes its deepcopy
// functions (zz_generated.deepcopy.go) and its CRD (../../config/crd/bases) with
// controller-gen.
//
// +kubebuilder:object:generate=true
// +groupName=quickstart.reconciler-sdk.c5c3.io
package v1alpha1
