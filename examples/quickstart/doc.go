// Package quickstart is the smallest complete operator built on reconciler-sdk, laid out
// as a kubebuilder project:
//
//   - api/v1alpha1: the Memo custom resource (a few INI settings, replicas, an image),
//     with kubebuilder markers for the CRD, its status subresource and print columns;
//   - controller: the MemoReconciler, a four-row step table run by package reconcile
//     (Config, a Sequential group of Deployment and Service, the prune) with its
//     SetupWithManager (and Register, which shards it with --sharded), its
//     +kubebuilder:rbac markers and its envtest test on the test kit's real controllers;
//   - cmd: main.go, the manager with a namespace-scoped cache, the Applier and the
//     reconciler;
//   - config: what `make generate` writes with controller-gen (the CRD and the
//     ClusterRole) and a sample Memo.
//
// The package itself holds no code. Run the example's test from the module root with
// `make test TESTFLAGS=-run=TestMemo` or `go test ./examples/...` (with
// KUBEBUILDER_ASSETS=$(hack/envtest.sh)).
package quickstart
