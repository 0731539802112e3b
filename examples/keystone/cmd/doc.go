// Command cmd runs the Keystone operator against any cluster: a multicluster-runtime
// manager (kubeconfig from --kubeconfig, $KUBECONFIG or the in-cluster config) with
// metrics (--metrics-bind-address; HTTPS to authenticated and authorized scrapers only,
// plain HTTP with --metrics-secure=false), health probes (--health-probe-bind-address),
// leader election (--leader-elect, on by default; --leader-elect=false or
// --leader-election-namespace for a run outside a cluster), a namespace-scoped mode (--namespace: the
// cache and the watches cover one namespace, and ClusterSecretStores are neither read
// nor watched), target clusters registered as kubeconfig Secrets in
// --clusters-namespace, and the admission webhooks (--webhook-port, 9443 by default)
// when --webhook-cert-path (or its deprecated name --webhook-cert-dir) names the
// directory of their serving certificate (tls.crt and tls.key); without it no webhook is
// served. -v gives more logs; operator.Main and multicluster.RunOperator do the rest.
//
//	go run ./examples/keystone/cmd --namespace openstack --leader-elect=false
//
// The key-rotation CronJobs run the same binary as `rotate-keys --secret <ns>/<name>
// --max-active-keys N --interval D`, and the database password rotation CronJob as
// `rotate-password --secret <ns>/<name>`, which stages a new password for the operator
// to switch to. They run the operator's own image, which --operator-image names
// (default $OPERATOR_IMAGE, which ../config/manager sets to the manager container's
// image): without either the operator refuses to start.
//
// The health check requests each Keystone's /v3 version document below the endpoint it
// publishes, dialling only where the SDK's outbound policy admits (no loopback,
// link-local, unspecified or multicast address, no redirect to another host). An
// administrator opens it with --outbound-allow LIST (CIDRs, addresses, host names) and
// --outbound-allow-cross-host-redirects, and points the checks of an operator that runs
// outside the cluster network at a proxy or port-forward with --health-check-base-url
// URL (an absolute http or https URL; the policy still applies to it). The identity
// backends' Keystone API client keeps the default policy.
//
// The ClusterRole the operator needs is ../config/rbac/role.yaml; the CRDs are in
// ../config/crd/bases and the webhook configurations in ../config/webhook.
package main
