// Command katalog runs Katalogs (package katalog) against a cluster: an operator
// written as YAML, without Go code.
//
//	go run ./cmd/katalog --katalog examples/katalog/platform.yaml --katalog examples/katalog/database.yaml
//
// It loads every file given with --katalog (the flag repeats, or takes a comma list)
// together, so that a dependsOn or cross reference may name a CRD of another file,
// and refuses to start when any of them has a problem: every problem is printed, each
// as file:line: path: what is wrong, and the command exits with status 1. Without any
// --katalog it prints its usage and exits with status 2.
//
// The Katalogs then run on a controller-runtime manager (multicluster.RunOperator):
// one controller per CRD entry, reconciling its custom resources as unstructured
// objects under the field manager "katalog". The CRDs themselves must be installed
// already (kubectl apply -f examples/katalog/crds/).
//
// Flags:
//
//	--katalog PATH                  a Katalog file; repeat it or give a comma list (required)
//	--kubeconfig PATH               the cluster (default: $KUBECONFIG, ~/.kube/config or in-cluster)
//	--namespace NS                  watch and reconcile only this namespace (all when empty)
//	--metrics-bind-address ADDR     /metrics (default :8082, off the inspector's port; 0 turns it off)
//	--health-probe-bind-address A   /healthz and /readyz (default :8081, 0 turns them off)
//	--inspector-bind-address ADDR   the inspector: JSON under /katalog/, pages under
//	                                /controlcenter/ (default :8080, 0 turns it off)
//	--leader-elect                  elect a leader among the replicas (Lease --leader-election-id)
//	--leader-election-id NAME       the Lease's name (default katalog.orkestra.orkspace.io)
//	--max-foreach-elements N        most elements one forEach expands to per custom resource
//	                                (default 256); a list or map with more writes none of them
//	--ondelete-give-up-after D      how long onDelete keeps trying after a deletion started
//	                                before the finalizer is removed anyway (default 10m)
//	--outbound-allow LIST           destinations the Katalogs' external calls may reach although
//	                                loopback, link-local, unspecified or multicast: CIDRs, addresses
//	                                or host names (169.254.10.0/24,127.0.0.1,registry.internal); repeat
//	                                it or give a comma list (default none)
//	--outbound-allow-cross-host-redirects
//	                                let external calls follow redirects to another host or from
//	                                https to http (default: not followed)
//	--external-calls-per-pass N     the most external calls one pass makes (default 16)
//	-v N                            log verbosity
//
// /metrics carries, besides controller-runtime's own, the duration and errors of every
// step of every pass: katalog_reconcile_duration_seconds and katalog_reconcile_errors_total
// with the label sub_reconciler "<crd>/<step>" (such as application/onCreate).
//
// /readyz answers 200 once the informer of every CRD entry's custom resources has
// synced. The inspector (package katalog/inspect) serves from the manager's cache:
// GET /katalog/{crd}/health answers 200 while the CRD is healthy and 503 otherwise, and
// /controlcenter/ shows every CRD, its custom resources and their children. It runs on
// every replica, leader or not.
//
// The engine needs the rules of katalog.ClusterRole: its custom resources, the child
// kinds, events, Leases and get on Namespaces. The subcommand rbac prints that
// ClusterRole for the Katalogs given, to bind to the ServiceAccount the engine runs as:
//
//	go run ./cmd/katalog rbac --katalog examples/katalog/platform.yaml --katalog examples/katalog/database.yaml --name katalog
//
// The Katalogs' external calls are confined by default (package katalog, "External
// calls"): no connection to a loopback, link-local (cloud metadata), unspecified or
// multicast address, whatever name resolves to it, no redirect to another host, no
// proxy, at most 16 calls a pass; a refused call sets the custom resource's Ready False
// with reason ExternalCallRefused naming the call and the refused address. Open those
// doors only for what the Katalogs need: --outbound-allow 169.254.10.20 for a registry
// on a link-local address, say.
//
// Target clusters (--clusters-namespace) are refused: the engine writes every child
// next to its custom resource.
package main
