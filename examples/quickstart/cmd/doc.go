// Command cmd runs the quick-start operator on operator.Run: a manager (kubeconfig from
// --kubeconfig, $KUBECONFIG or the in-cluster config) with metrics
// (--metrics-bind-address; HTTPS to authenticated and authorized scrapers only, plain
// HTTP with --metrics-secure=false), health probes (--health-probe-bind-address), leader
// election (--leader-elect, on by default; --leader-elect=false or
// --leader-election-namespace for a run outside a cluster) and, with --namespace, a
// cache and a watch limited to one namespace; the Applier under the field manager
// "memo-operator"; and the MemoReconciler of package controller.
//
//	go run ./examples/quickstart/cmd --namespace default --leader-elect=false
package main
