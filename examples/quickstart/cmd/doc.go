// Command cmd runs the quick-start operator: a controller-runtime manager (kubeconfig
// from --kubeconfig, $KUBECONFIG or the in-cluster config) with metrics, health probes,
// optional leader election and, with --namespace, a cache and a watch limited to one
// namespace; an apply.Applier under the field manager "memo-operator"; and the
// MemoReconciler of package controller.
//
//	go run ./examples/quickstart/cmd --namespace default
package main
