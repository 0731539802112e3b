// Package satellite holds the mechanics shared by the controllers of satellite CRDs and
// by the parent reconcilers that aggregate them.
//
// A satellite is a namespaced configuration CR attached by name to a parent service CR
// in its namespace (a GlanceBackend names its Glance, a CinderBackend its Cinder). It
// does not run anything itself: the parent renders it into the configuration of the
// Deployment it runs, and the satellite observes its own effect through that
// Deployment. The kinds built this way are GlanceBackend, CinderBackend,
// CinderBackupBackend, BarbicanSecretStore and the identity service's IdentityBackend.
//
// The package holds no condition vocabulary, messages, events or requeue intervals:
// those stay in the operator. Each helper hands a decision back as data, or takes the
// condition type, reason and message it sets as parameters.
//
// # The handshake
//
// A satellite and its parent never write to each other. They meet in five steps:
//
//  1. The satellite controller resolves the parent the satellite names
//     ([ResolveParentChildren]), checks what the satellite needs (a credentials
//     Secret, a login, a domain), and sets the satellite's gate condition (for example
//     CredentialsReady).
//  2. The aggregation step in the parent's pipeline lists the satellites that name the
//     parent and reads that one condition of each ([Collect] with a Gate). A satellite
//     whose gate is not True is skipped, and the pipeline goes on with the others.
//  3. The step renders one section per satellite that passed into a Secret whose name
//     carries a hash of its content.
//  4. The pod template of the parent's Deployment mounts that Secret. A new Secret
//     name is a new pod template, so the pods roll.
//  5. The satellite controller reads the pod template, follows the volume to the Secret
//     and finds its own section there ([SectionProjected]). It sets ConfigProjected,
//     and the aggregate Ready follows once the gate and ConfigProjected are both True.
//
// The step never reads a satellite's Ready: Ready needs ConfigProjected, which turns
// True only after the step has projected the satellite, so waiting for Ready would wait
// for itself. No status field of the parent carries the projection either; the
// Deployment and the Secret are the evidence. While ConfigProjected is False the
// satellite controller polls (typically every 15 s; every 30 s for a
// BarbicanSecretStore, whose gate logs in to OpenBao).
//
// # Kinds
//
// Names in braces are the parent's name ({glance}), the satellite's name ({name}), the
// identity domain ({domain}) and the content hash ({hash}).
//
//	Kind                     Gate the step reads  What the gate needs
//	GlanceBackend            CredentialsReady     the Secret of spec.s3.credentialsSecretRef with both S3 keys
//	CinderBackend            CredentialsReady     NFS: nothing (True, CredentialsNotRequired, once the parent
//	                                              resolves); RBD: the Secret of spec.rbd.keySecretRef with a
//	                                              non-empty base64 userKey
//	CinderBackupBackend      CredentialsReady     as CinderBackend
//	BarbicanSecretStore      CredentialsReady     the credentials Secret and a login the OpenBao server accepts
//	IdentityBackend          DomainReady          the identity API answering, the admin password Secret, the
//	                                              domain created or adopted
//
//	Kind                     Rendered into                              Workload                   Evidence for ConfigProjected
//	GlanceBackend            key backends.conf of Secret                Deployment {glance}        header [{name}] in the
//	                         {glance}-backends-{hash}                                              mounted Secret
//	CinderBackend            Secret {cinder}-backend-{name}-{hash},     Deployment                 header [{name}] in key
//	                         one per backend                            {cinder}-volume-{name}     backend.conf
//	CinderBackupBackend      key backup.conf of a Secret named after    Deployment                 the name of the Secret its
//	                         the backend                                {cinder}-backup            backup volume references
//	                                                                                               (content not read)
//	BarbicanSecretStore      section [secretstore:{name}] of            Deployment {barbican}      the section header in the
//	                         barbican.conf in Secret                                               mounted Secret
//	                         {barbican}-config-{hash}
//	IdentityBackend          one file per domain in Secret              Deployment {identity}      the data key in the mounted
//	                         {identity}-domains-{hash}; OIDC and SAML                              Secret, and the rollout
//	                         documents in {identity}-federation-{hash}                             finished
//
// [SectionProjected] answers the header cases directly, and the data-key case with an
// empty SectionHeader. CinderBackupBackend compares the name [SecretNameForVolume]
// returns with the Secret it expects, without reading the content. For an
// IdentityBackend, ConfigProjected has a third state, WaitingForRollout, which the
// operator sets from the Deployment's status once the key is present.
//
// # Resolving the parent
//
// [ResolveParentChildren] is the first thing a satellite controller does on each pass.
// Client reads the parent into Parent at ParentKey; TargetClusterRef reads the parent's
// spec.targetClusterRef and Resolver looks that cluster up (a nil Resolver keeps
// everything on Client). It answers in one of these ways:
//
//   - the children client (non-nil), a zero result and no error: the caller goes on
//     with its own checks, which set the gate; Conditions is left as it is. A parent
//     being deleted still counts as present: its Deployment runs until the garbage
//     collector removes it;
//   - a parent that does not exist: GateConditionType False with
//     WaitingForParentReason and WaitingForParentMessage, a nil client and
//     ctrl.Result{RequeueAfter: RequeueAfter}. There is no fallback to the local
//     client: without the parent, the satellite cannot know where its effect runs.
//     With ProjectionConditionType set, that condition flips to False as well
//     (ProjectionDemotionReason, ProjectionDemotionMessage) where it stands True; an
//     absent, False or Unknown one is left untouched;
//   - a target cluster that does not resolve: GateConditionType False under
//     multicluster.TargetClusterUnavailable with the resolver's error as message, a
//     nil client and the same requeue. A Resolver that returns neither an error nor a
//     client is a programming error, returned as one;
//   - any other failed read of the parent: a nil client, a zero result and the error
//     `fetching parent <ParentKind> <namespace>/<name>: <cause>` (wrapped with %w),
//     Conditions untouched;
//   - a nil Client, Parent or Conditions, or an empty GateConditionType: an error
//     wrapping [ErrInvalidParams] naming the field, before any API call.
//
// A nil children client means the caller returns result and err as they are. Every
// condition set here carries observedGeneration = Generation, moves
// lastTransitionTime only when the status flips, and has its reason repaired as
// reconcile.SetCondition repairs one.
//
// # Observing the projection
//
// [SectionProjected] reads the Deployment at DeploymentKey through Children, takes the
// Secret the pod volume VolumeName mounts ([SecretNameForVolume]), reads it in the
// Deployment's namespace and looks SectionHeader up as a whole line in the value of
// DataKey ([SectionPresent]); with an empty SectionHeader the presence of DataKey is
// enough. Anything missing on that chain (the Deployment, the volume, a volume that
// mounts no Secret, the Secret, the data key) is (false, nil): the caller polls. A
// failed read other than NotFound returns the error `fetching Deployment
// <namespace>/<name>: <cause>` or `fetching projection Secret <namespace>/<name>:
// <cause>`, wrapped with %w; a nil Children or an empty DeploymentKey.Name, VolumeName
// or DataKey wraps [ErrInvalidParams] before any API call.
//
// The pod template is the evidence, not the rollout: a Deployment being deleted, or one
// whose new pods are not Ready yet, is read as it stands; a consumer that needs the
// rollout finished checks the Deployment's status itself. Consumers re-read the parent
// ahead of the call (so a parent deleted since ResolveParentChildren does not leave
// ConfigProjected True) and own the condition's reasons, messages and polling interval.
//
// # Target clusters
//
// A parent may run its children on a target cluster (spec.targetClusterRef, package
// multicluster). The satellite lives next to its parent on the management cluster, but
// its evidence lives with the parent's Deployment: [ResolveParentChildren] returns the
// client for that cluster, and [SectionProjected] reads through it. A target cluster
// that does not resolve is reported on the satellite's gate condition under
// multicluster.TargetClusterUnavailable.
//
// # Footprint
//
// Per helper: what it reads, which reads start an informer when the client is a
// manager's cached client, and the RBAC verbs it needs, as the +kubebuilder:rbac
// markers in rbac.go grant them (rbac/satellite/role.yaml). list and watch come with
// every get: a cached read lists and watches the kind. Nothing in this package writes
// to the API server.
//
//   - [ResolveParentChildren]: gets the parent (the operator's own kind, which its own
//     role grants; informer: the parent kind). The Resolver may read more on its own.
//   - [SectionProjected]: gets the Deployment (informer: Deployments on the children's
//     cluster) and the Secret it mounts (informer: Secrets, unless Secrets are read past
//     the cache). RBAC: apps deployments and secrets get, list, watch.
//   - [Collect], [SecretNameForVolume], [SectionPresent]: no API call.
package satellite
