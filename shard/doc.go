// Package shard lets N active replicas of one operator split its custom resources
// between them, each reconciling a disjoint slice, with no component besides the
// replicas themselves.
//
// # The ring
//
// The slices are ranges of the 64-bit FNV-1a hash of a custom resource's UID ([Hash]),
// the hash the API server's shard selector compares (ListOptions.shardSelector,
// shardRange(object.metadata.uid, ...)). Each replica is a [Member] of a ring: it holds a
// Lease (coordination.k8s.io/v1) named <ring>-<identity> in the operator's namespace,
// labelled [LabelRing], renewed every RenewPeriod. The members alive are those whose
// Lease changed within LeaseDuration, as each member measures it with its own clock
// since it last saw the Lease change (no clock comparison between replicas). [Assign]
// splits the space among them by consistent hashing (64 points each): every member
// computes the same split from the same members, and a member joining or leaving moves
// only the ranges next to its points.
//
// # Hand-off without overlap
//
// A member's Lease records what it holds ([AnnotationHeld]) and what it asks for
// ([AnnotationClaimed]). In each round it renews its Lease, lists the ring's Leases
// from the API server (a linearizable read, so the client must not be a cache), and:
//
//   - releases a held range the ring no longer assigns it once every pass admitted in
//     that range is done (it admits no new pass there at once);
//   - confirms a claim its Lease showed before the read where no other live member holds
//     or claims anything: of two members that both claim a hash, neither can confirm
//     before seeing the other's claim, so at most one ever holds it; on a collision the
//     member whose name sorts first keeps its claim and the other withdraws;
//   - claims what the ring assigns it and nobody holds or claims.
//
// A member passes over an object only while its hash lies in [Member.Active] (held and
// assigned) and its own last renewal is fresh: it stops admitting passes RenewPeriod
// before the others could count its Lease expired, and every pass runs under a context
// that ends then ([Member.Admit]). So a replica that dies, or loses the API server,
// without releasing its ranges is taken over once its Lease expires: within
// LeaseDuration plus two RenewPeriods, less than two Lease durations (RenewPeriod is at
// most a quarter of LeaseDuration). A member that could not renew in time holds nothing
// when it comes back and claims its share anew. On a graceful stop ([Member.Run]'s
// context ends) it drains its passes and releases its Lease (no holder, nothing held),
// and the others take over within a round. While a Lease deleted by someone else is
// missing, the others claim and confirm nothing, for at most a Lease duration from the
// first read that missed it: its member may have confirmed ranges since they last read
// its Lease, keeps them, and writes its Lease again (holding them) at its next
// renewal; a member that is gone as well loses its ranges when that Lease duration
// ends. A Lease left behind
// by a replica gone or released for ten Lease durations is deleted by the others.
//
// # Wiring a controller
//
// [Gate] wraps the controller's reconciler: a request whose object lies outside the
// member's active ranges is dropped, so every replica may receive every event. Two ways
// keep the others' objects away from a replica:
//
//   - Client-side filtering: every informer holds every object, the Gate drops the
//     others' requests, and [Requeue] (a source the controller watches) enqueues the
//     objects of the ranges a member gains, whose events went elsewhere. It works on any
//     API server; memory and watch traffic are those of a single replica.
//   - Server-side selectors: the manager's rest.Config wrapped with
//     [Member.ServerSideTransport] sends every list and watch of the custom resource with
//     the member's shardSelector, so the API server sends each replica only its slice; on
//     a range change the informer lists again (the gained objects arrive as additions, and
//     predicate.ResourceVersionChangedPredicate drops the replays of the kept ones). It
//     needs Kubernetes 1.36 or later with the ShardedListAndWatch feature gate (alpha);
//     [ServesShardSelector] asks the API server whether it honours the selector, from the
//     shardInfo its answer echoes. Where it does not, use client-side filtering: the
//     answers are the same, only the traffic differs.
//
// operator.Run and multicluster.RunOperator with operator.Options.Sharded (--sharded)
// join the ring (operator.JoinRing) and hand the member to the setup
// (operator.Operator.Shard, multicluster.ClusterResolver.Shard); RunOperator's
// CRReconcilers gate and watch by themselves (client-side filtering unless ShardSelectors,
// which also narrows the children, on the management cluster and on every target
// cluster, below). Both refuse to start a setup that gated no
// reconciler ([Member.Gated]).
//
// # Children
//
// The API server shards by UID or namespace only, so children (Deployments, Secrets,
// ...) cannot be selected by their owner's hash. They are selected by a label instead:
// the space is cut into 1<<[BucketBits] buckets (the leading bits of the hash), [Assign]
// gives each member whole buckets, and a sharded operator's Applier stamps [LabelBucket]
// = [BucketOf] the owner's UID on every child it writes (apply.ApplierOptions.OwnerLabels
// = [OwnerLabels]). A transport of the member ([Member.ServerSideTransport], or
// [Member.OwnedTransport] on a server without shardSelector) adds the member's
// [Ranges.BucketSelector] to every list and watch of the kinds of [Member.SelectOwned]
// that selects by no label or by apply.ManagedByLabel only, and lists them again when
// the ranges change, so each replica's cache holds only the children of its own slice.
// The transports read what they narrow by from the member on every request and are
// not registered with it (only their open watches are, until closed or their request
// ends), so a config may be wrapped for each cluster the children live on, the target
// clusters of package multicluster included (multicluster.ManagerOptions.Shard), and a
// cluster dropped leaves nothing behind in the member.
// The Applier is then told its cache holds only labelled objects
// (apply.ApplierOptions.SelectedCache): a child it does not see is confirmed through the
// API reader before anything is written, never taken for missing. Without a transport,
// the children informers hold every child and their events map to the owning custom
// resource, which the Gate drops on the replicas that do not own it.
//
// Limits: a controller that reads children of custom resources it does not reconcile (a
// satellite's projection collected by its parent, another kind's child) must not
// narrow them; a child written before the operator was sharded carries no bucket and is
// invisible to the narrowed caches until its owner's next pass applies it again (the
// confirmed miss finds it).
//
// # Permissions
//
// Each replica needs get, list, create, update and delete on leases.coordination.k8s.io
// in the namespace of the ring.
package shard
