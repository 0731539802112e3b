// Package controller holds the quick-start operator's MemoReconciler: a table of four
// steps run by package reconcile, each a few calls into the SDK's config and deployment
// packages, the SetupWithManager that wires it into a controller-runtime manager, and
// Register, the same wiring on an operator.Operator that, with --sharded, gates it by the
// replica's shard of the Memos.
// Its +kubebuilder:rbac markers are what `make generate` turns into
// ../config/rbac/role.yaml.
//
// The region between the readme:start and readme:end comments of memo_controller.go is
// the README's quick start; a test in the module root fails when the two differ.
package controller
