// Package v1 defines Widget, a kind that exists only for the tests of package
// github.com/c5c3/reconciler-sdk/api/v1. It embeds the spec blocks of that package the
// way an operator's CRD does, so that `make generate` renders their validation markers
// into a real CRD (crds/) which the tests install on envtest and write objects to.
//
// +kubebuilder:object:generate=true
// +groupName=testcrd.reconciler-sdk.c5c3.io
package v1
