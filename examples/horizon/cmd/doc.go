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
// The health check requests each Horizon's login page below the endpoint it publishes,
// dialling only where the SDK's outbound policy admits (no loopback, link-local,
// unspecified or multicast address, no redirect to another host). An administrator
// opens it with --outbound-allow LIST (CIDRs, addresses, host names) and
// --outbound-allow-cross-host-redirects, and points the checks of an operator that runs
// outside the cluster network at a proxy or port-forward with --health-check-base-url
// URL (an absolute http or https URL; the policy still applies to it).
//
//	go run ./examples/horizon/cmd --namespace openstack --leader-elect=false
//
// The ClusterRole the operator needs is ../config/rbac/role.yaml; the CRD is in
// ../config/crd/bases. The Keystone example's KeystoneIdentityBackend CRD
// (../../keystone/config/crd/bases) is optional and the operator's scheme holds no
// Keystone group (the backends are read as unstructured objects): when the cluster
// serves the kind at start-up the operator watches the backends that
// spec.websso.identityBackends names; otherwise
// a Horizon that names one reports IdentityBackendsNotInstalled and offers its
// hand-written choices only.
package main
