// Package operator is the bootstrap of a single-cluster operator on plain
// controller-runtime: the flags every operator shares, the manager, its cache, the
// Applier, the health probes, secure metrics and leader election, in one call to [Run].
// Target clusters are a layer on top (multicluster.RunOperator builds on this package).
//
//	func main() {
//		opts := operator.DefaultOptions()
//		opts.FieldManager, opts.LeaderElectionID = "memo-operator", "memo-operator.example.com"
//		opts.AddToScheme = []func(*runtime.Scheme) error{v1alpha1.AddToScheme}
//		os.Exit(operator.Main("memo-operator", opts.BindFlags, func(ctx context.Context, cfg *rest.Config) error {
//			return operator.Run(ctx, cfg, opts, func(ctx context.Context, op operator.Operator) error {
//				r := NewMemoReconciler(op.Applier, op.Scheme, op.APIReader)
//				return ctrl.NewControllerManagedBy(op.Manager).For(&v1alpha1.Memo{}).Complete(r)
//			})
//		}))
//	}
//
// [Main] adds the logging flags (-v, -vmodule), parses the command line and sets
// controller-runtime's logger; a main that parses flags itself calls [Run] directly.
//
// # Flags and defaults
//
// [DefaultOptions] is safe to deploy as it is; each flag below opens one door.
//
//   - --metrics-bind-address (":8080"; "0" off): where /metrics listens.
//   - --metrics-secure (true): /metrics over HTTPS, only to a bearer token the API server
//     authenticates (TokenReview) whose user may get the non-resource URL /metrics
//     (SubjectAccessReview; RBAC nonResourceURLs ["/metrics"], verbs ["get"]), through
//     package httpauth. The operator needs create on tokenreviews and
//     subjectaccessreviews. false serves plain HTTP to anyone who reaches the address.
//   - --metrics-cert-path (""): tls.crt and tls.key of the metrics server; empty means a
//     self-signed certificate made at start. Only with --metrics-secure.
//   - --health-probe-bind-address (":8081"; "0" off): /healthz and /readyz, plain HTTP
//     without authentication (ping checks only: they reveal nothing).
//   - --leader-elect (true): only the replica holding the Lease LeaderElectionID
//     reconciles, so an external call or a Job is never made twice; it needs get, create
//     and update on leases. false for a local run.
//   - --leader-election-namespace (""): the Lease's namespace; empty means the pod's own,
//     so a run outside a cluster gives one or turns leader election off.
//   - --namespace (""): the cache, every watch and every cached read see this namespace
//     only; empty means all namespaces.
//   - --webhook-cert-path (""): tls.crt and tls.key of the admission webhook server,
//     reloaded when they change; empty serves no webhook. The API server calls it, so
//     it listens on every address, HTTPS (HTTP/1.1) only.
//   - --webhook-port (9443): the webhook server's port, with --webhook-cert-path.
//   - --sharded (false): every replica active, each reconciling its share of the custom
//     resources (see Sharding below); it turns leader election off and needs get, list,
//     create, update and delete on leases in the ring's namespace. It opens no listener.
//   - --shard-selectors (false): with --sharded, each replica's informers hold only its
//     slice.
//
// Whatever the flags, Secrets and ConfigMaps are cached only when they carry
// apply.ManagedByLabel with the operator's field manager (apply.CacheOptions), the
// kinds of reconcile.UncachedObjects are read past the cache, and the [Operator.Applier]
// confirms a cache miss of a Secret or ConfigMap through the API reader.
//
// # Sharding
//
// With Options.Sharded (--sharded) [Run] joins this replica to a ring of package shard
// ([JoinRing]: the ring named after FieldManager, its Leases in
// --leader-election-namespace or the pod's namespace), runs the member in the manager
// ([RingRunnable]) and hands it to the setup as [Operator.Shard]; the Applier stamps
// every child with shard.OwnerLabels of its owner. The setup wires each controller of a
// custom resource as the package shard documentation describes ("Wiring a
// controller"):
//
//	rec = shard.Gate(op.Shard, op.Manager.GetClient(), func() *v1alpha1.Memo { return &v1alpha1.Memo{} }, rec)
//	op.Shard.SelectOwned(childResources...) // the kinds its Applier writes
//	if op.Shard.ServerSide() {
//		op.Shard.Select(memoResource)
//	} else {
//		b = b.WatchesRawSource(shard.Requeue(op.Shard, op.Manager.GetClient(), newMemoList))
//	}
//
// Run refuses a setup that gated no reconciler. With ShardSelectors
// (--shard-selectors) the informers of the kinds of SelectOwned hold only the children
// of the replica's custom resources (by the bucket label, on any API server), those of
// Select only its custom resources where the API server serves shardSelector, and the
// Applier confirms every cache miss through the API reader.
//
// # Scheme
//
// [NewScheme] registers every kind the SDK's packages read or write, plus the
// operator's own; [Run] builds it from Options.AddToScheme when Options.Manager.Scheme
// is nil ([Options.Scheme]).
//
// # Admission webhooks
//
// Options.SetupWebhooks registers the operator's webhooks; [Run] calls it only when the
// manager serves webhooks (--webhook-cert-path, or a Manager.WebhookServer of the caller,
// such as a test's), so a run without a certificate serves none.
package operator
