// Package multicluster writes a CR's children to a target cluster: the CR lives on the
// management cluster, spec.targetClusterRef (api/v1.TargetClusterRefSpec) names the
// cluster its workload runs on, and a nil ref keeps everything on the management
// cluster. It is built on sigs.k8s.io/multicluster-runtime and its kubeconfig provider;
// the core packages (apply, reconcile) know nothing of it.
//
// # Registering target clusters
//
// A target cluster is a Secret in the operator's clusters namespace (the examples'
// --clusters-namespace), labelled [KubeconfigSecretLabel]="true", whose data key
// [KubeconfigSecretKey] holds a kubeconfig that reaches it; the Secret's name is the
// cluster's name, the one spec.targetClusterRef.name gives. [NewManager] builds the
// manager and the provider that engages each such cluster (its own cache, sharing the
// manager's scheme); deleting the Secret disengages it.
//
// The Secret says which namespaces may use the cluster: its annotation
// [AllowedNamespacesAnnotation] (cobaltcore.c5c3.io/allowed-namespaces) lists them,
// comma separated, or "*" for all. A Secret without it serves no namespace, and a CR of
// a namespace it does not list gets [TargetClusterUnavailable] naming the annotation;
// nothing is written to or swept from the cluster for that CR.
//
//	metadata:
//	  name: edge
//	  namespace: clusters
//	  labels: {sigs.k8s.io/multicluster-runtime-kubeconfig: "true"}
//	  annotations: {cobaltcore.c5c3.io/allowed-namespaces: "team-a,team-b"}
//
// Whoever may write such a Secret is not trusted with the operator's pod. A kubeconfig
// with an exec or auth-provider plugin (which would run a command in the pod), a field
// that reads a file of the pod (tokenFile, client-certificate, client-key,
// certificate-authority: the operator's own ServiceAccount token would go to the server
// the kubeconfig names), insecure-skip-tls-verify or a server that is not https:// is
// refused before client-go reads it: the cluster is not engaged, the Secret gets a
// Warning event [ReasonKubeconfigRefused], and a CR naming the cluster gets
// TargetClusterUnavailable naming the Secret and the refused field, never a credential.
// An administrator opens these doors one by one with [KubeconfigOptions]
// (ManagerOptions.Kubeconfig, OperatorOptions.Kubeconfig; the flags
// --insecure-kubeconfig-exec, --insecure-kubeconfig-files, --insecure-kubeconfig-tls),
// and vets every kubeconfig further with KubeconfigOptions.VetConfig.
//
//	mgr, err := multicluster.NewManager(cfg, ctrl.Options{Scheme: scheme,
//		Cache: multicluster.CacheOptions("dashboard-operator", clustersNamespace)},
//		multicluster.ManagerOptions{ClustersNamespace: clustersNamespace, FieldManager: "dashboard-operator"})
//	resolver, err := multicluster.NewResolver(ctx, mgr, multicluster.ResolverOptions{
//		Applier: apply.ApplierOptions{FieldManager: "dashboard-operator"}})
//
// # Running an operator
//
// [RunOperator] is the single-cluster bootstrap of package operator (its flags,
// defaults, manager, metrics, probes and leader election, documented there) with the
// target-cluster parts added: --clusters-namespace and the --insecure-kubeconfig-*
// flags ([OperatorOptions.BindFlags]), the manager of [NewManager] with the cache of
// [CacheOptions], and its [ClusterResolver] handed to the setup. An operator without
// target clusters boots with operator.Run instead.
//
//	opts := multicluster.DefaultOperatorOptions()
//	opts.FieldManager, opts.LeaderElectionID = "gadget-operator", "gadget-operator.example.com"
//	opts.BindFlags(flag.CommandLine)
//	flag.Parse()
//	opts.Manager.Scheme = scheme
//	err := multicluster.RunOperator(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), opts,
//		func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
//			r, err := controller.NewReconciler(resolver, controller.DefaultOptions())
//			if err != nil {
//				return err
//			}
//			return r.SetupWithManager(ctx, mgr)
//		})
//
// # Resolving a CR's cluster
//
// [TargetGate] runs ahead of every step: it resolves the ref through the [Resolver] and
// returns the [Target] the steps write to, its Client an apply.Applier for that
// cluster. A ref that is not registered, whose kubeconfig Secret does not list the CR's
// namespace or is refused, or whose API server does not answer (a probe of GET /version
// at most once per ReachabilityTTL), answers the step's condition False with reason
// [TargetClusterUnavailable] and the resolver's error as message and a requeue after
// [RetryInterval] (hand it to reconcile.Settle); nothing is written on any cluster. The
// condition flips back when the cause is gone. The [ClusterResolver] reads the CR's
// namespace from the context ([WithNamespace]), where [LocalReconciler], [OnTarget]
// and [Cleanup] put it; a context without one resolves no target cluster.
//
// # Ownership on a target cluster
//
// An owner reference cannot resolve on a target cluster (its garbage collector would
// delete a child whose owner it cannot find), so the target's Applier claims children
// with labels naming the owner's kind, namespace and name and this management cluster's
// identity (apply.RemoteOwnership, apply.ClaimLabels). Two management clusters sharing a
// target have different identities (by default the UID of their kube-system namespace)
// and never touch each other's children; an existing object that the labels do not
// claim is refused unless it carries the adopt annotation and no other claim.
//
// # Deletion
//
// The management cluster's garbage collector cannot reach a target cluster, so
// [Cleanup] puts a finalizer on a CR that names a target cluster (only then: a CR on the
// management cluster needs none), sweeps the CR's claimed children there when it is
// deleted, and, when the cluster stays unavailable, gives up after
// CleanupOptions.GiveUpAfter with a Warning event, so a CR is never stuck forever. A CR
// that moves to another cluster has its children on the old one swept on a later pass;
// one that moves from the management cluster to a target cluster has the children it
// controls on the management cluster (of the CleanupOptions.Children kinds) deleted
// before its first write to the target.
//
// # Watches
//
// Register the CR kind and its management-cluster children with For and Owns engaged
// with the local cluster only, and wrap the reconciler with [LocalReconciler]:
//
//	b := mcbuilder.ControllerManagedBy(mgr).Named("dashboard").
//		For(&v1alpha1.Dashboard{}, mcbuilder.WithEngageWithLocalCluster(true),
//			mcbuilder.WithEngageWithProviderClusters(false))
//	b, err = multicluster.AddChildWatches(b, scheme, &v1alpha1.Dashboard{}, resolver.Remote(),
//		&appsv1.Deployment{}, &corev1.Service{})
//	b, err = multicluster.AddInputWatch(b, scheme, targets, &esov1.SecretStore{}, storeToDashboards)
//	err = b.Complete(multicluster.LocalReconciler(r))
//
// [AddChildWatches] maps an event on a claimed child of any target cluster back to the
// CR that claims it, so an edit there is repaired by the next pass. [AddInputWatch]
// watches an input kind with a local and a remote leg: a change on the management
// cluster re-triggers the CRs without a target cluster, a change on a target cluster
// the CRs that name it ([TargetClusterFunc], [TargetClusterOf]). A remote leg watches
// only the clusters that serve its kind when they engage (package capability), so a
// target cluster without a CRD is not broken by a watch on it. Whether an optional
// child's kind is served is asked per pass against Target.RESTMapper.
// [CRReconciler] ([NewCRReconciler], [ReconcilerOptions]) is a CR kind's reconciler with all of this wired.
//
// # Sharding
//
// With OperatorOptions.Sharded (--sharded) every replica is active, each a member of a
// shard ring (package shard), and ResolverOptions.Shard gates every [CRReconciler] to
// the CRs of the member's ranges. With ShardSelectors (--shard-selectors) as well, the
// informers of the children kinds hold only the replica's buckets on every cluster:
// the management cluster's through the rest config operator.JoinRing wraps, each target
// cluster's through ManagerOptions.Shard, which wraps the config the kubeconfig
// provider builds with shard.Member.OwnedTransport (a plain label selector on
// shard.LabelBucket, which any target API server serves). The kinds narrowed are those
// a CRReconciler owns (shard.Member.SelectOwned; a kind only the target clusters serve
// is registered by the resource each names as it engages), in every list or watch that
// selects by no label or by apply.ManagedByLabel only; a range change makes their
// informers list again, on every cluster. The Applier of each target cluster stamps the
// bucket (shard.OwnerLabels) and confirms a cache miss through the cluster's API reader
// (apply.ApplierOptions.SelectedCache), so a child the cache cannot show, such as one
// written before the operator was sharded, is found and labelled by its owner's next
// pass instead of being taken for missing. A target cluster disengaged (its Secret
// deleted) leaves nothing of its transports in the member. The limits are those of the
// management cluster (package shard, "Children"): a controller that reads children of
// CRs it does not reconcile, on any cluster, must not narrow them.
//
// # Footprint
//
//   - [NewManager]: the provider lists and watches Secrets in the clusters namespace (one
//     informer on the management cluster) and starts one cache per target cluster.
//   - [NewResolver]: one GET of Namespace kube-system when no identity is configured.
//   - [ClusterResolver.Resolve]: no request for the management cluster; for a target
//     cluster a cached read of its kubeconfig Secret (vetted once per resourceVersion)
//     and one GET /version per ReachabilityTTL.
//   - [Cleanup]: patches the CR's finalizers; on a target cluster lists each swept kind
//     in the CR's namespace (uncached) and deletes the claimed children; when a CR
//     starts to name a target cluster, lists each kind once in its namespace on the
//     management cluster (uncached) and deletes what the CR controls there.
package multicluster
