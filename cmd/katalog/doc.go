// Command katalog runs Katalogs (package katalog) against a cluster: an operator
// written as YAML, without Go code.
//
//	go run ./cmd/katalog --leader-elect=false --katalog examples/katalog/platform.yaml --katalog examples/katalog/database.yaml
//
// (--leader-elect=false for a run outside a cluster, which has no namespace for the
// Lease; or give one with --leader-election-namespace.)
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
//	--metrics-secure                /metrics over HTTPS to authenticated and authorized scrapers
//	                                only (default true); =false serves plain HTTP to anyone
//	--metrics-cert-path DIR         tls.crt and tls.key of /metrics (default: self-signed)
//	--health-probe-bind-address A   /healthz and /readyz (default :8081, 0 turns them off)
//	--inspector-bind-address ADDR   the inspector: JSON under /katalog/, pages under
//	                                /controlcenter/ (default 127.0.0.1:8080, the loopback
//	                                interface only; 0 turns it off). Any other address serves
//	                                HTTPS to authenticated and authorized clients only
//	--inspector-cert-dir DIR        tls.crt and tls.key of the inspector beyond the loopback
//	                                interface (default: self-signed)
//	--leader-elect                  elect a leader among the replicas (default true; Lease
//	                                --leader-election-id); =false for a local run
//	--leader-election-id NAME       the Lease's name (default katalog.orkestra.orkspace.io)
//	--leader-election-namespace NS  the Lease's namespace (default: the pod's; required outside
//	                                a cluster unless --leader-elect=false)
//	--sharded                       every replica active, each reconciling the custom resources
//	                                whose UID hashes into its share of a ring of Leases in the
//	                                leader election namespace (package shard); leader election
//	                                off. The caches hold every custom resource and child (cross
//	                                references read them): --shard-selectors narrows nothing here
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
// with the label sub_reconciler "<crd>/<step>" (such as application/onCreate). It is
// served over HTTPS to a scraper whose bearer token the API server authenticates and
// whose user may get /metrics (RBAC: nonResourceURLs ["/metrics"], verbs ["get"]), see
// multicluster.OperatorOptions.InsecureMetrics.
//
// /readyz answers 200 once the informer of every CRD entry's custom resources has
// synced. The inspector (package katalog/inspect) serves from the manager's cache:
// GET /katalog/{crd}/health answers 200 while the CRD is healthy and 503 otherwise, and
// /controlcenter/ shows every CRD, its custom resources (a page at a time) and their
// children. It runs on every replica, leader or not, and listens on 127.0.0.1:8080 by
// default: kubectl port-forward reaches it, nothing else on the pod network does. On
// any other address (--inspector-bind-address :8080) it serves HTTPS and lets in only a
// client with a bearer token whose user may get the path, by a SubjectAccessReview of
// the non-resource URL (verb get): a viewer's ClusterRole lists nonResourceURLs ["/",
// "/katalog/*", "/controlcenter/*"] with verbs ["get"].
//
// The engine needs the rules of katalog.ClusterRole: its custom resources, the child
// kinds, events, get on Namespaces, and create on TokenReviews and SubjectAccessReviews
// (to let in only authorized scrapers and viewers); and, in its own namespace only, the
// Role katalog.LeaseRole: get, list, watch, create, update and patch on Leases, for
// leader election (no delete). The subcommand rbac prints both, the ClusterRole and
// then the Role, as two YAML documents for the Katalogs given, to bind to the
// ServiceAccount the engine runs as (a ClusterRoleBinding and, in the engine's
// namespace, a RoleBinding); --namespace NS puts the Role in NS, without it kubectl
// apply -n places it:
//
//	go run ./cmd/katalog rbac --katalog examples/katalog/platform.yaml --katalog examples/katalog/database.yaml --name katalog --namespace katalog-system
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
