// Command cmd runs the quick-start operator on multicluster.RunOperator: a manager
// (kubeconfig from --kubeconfig, $KUBECONFIG or the in-cluster config) with metrics
// (--metrics-bind-address), health probes (--health-probe-bind-address), optional leader
// election (--leader-elect) and, with --namespace, a cache and a watch limited to one
// namespace; the management cluster's apply.Applier under the field manager
// "memo-operator"; and the MemoReconciler of package controller. A Memo has no target
// cluster, so --clusters-namespace is refused.
//
//	go run ./examples/quickstart/cmd --namespace default
package main
