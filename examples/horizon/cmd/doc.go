// Command cmd runs the Horizon operator against any cluster: a multicluster-runtime
// manager (kubeconfig from --kubeconfig, $KUBECONFIG or the in-cluster config) with
// metrics (--metrics-bind-address; HTTPS to authenticated and authorized scrapers only,
// plain HTTP with --metrics-secure=false), health probes (--health-probe-bind-address),
// leader election (--leader-elect, on by default; --leader-elect=false or
// --leader-election-namespace for a run outside a cluster), a namespace-scoped mode (--namespace: the
// cache and the watches cover one namespace, and ClusterSecretStores are neither read nor
// watched), target clusters registered as kubeconfig Secrets in --clusters-namespace,
// the admission webhook (--webhook-port, 9443 by default) when --webhook-cert-path (or its
// deprecated name --webhook-cert-dir) names its serving certificate, and -v for more logs;
// operator.Main and multicluster.RunOperator do the rest.
//
//	go run ./examples/horizon/cmd --namespace openstack --leader-elect=false
//
// The ClusterRole the operator needs is ../config/rbac/role.yaml; the CRD is in
// ../config/crd/bases.
package main
