// Package config renders oslo.config INI files and stores rendered configuration in
// content-addressed, immutable ConfigMaps and Secrets.
//
// # Rendering
//
// [Sections] holds an INI file as section name → option name → values. [RenderINI]
// writes it byte for byte deterministically: the [DEFAULT] section first, then the
// other sections in sorted order, options sorted within each section, and an option
// with several values repeated once per value, in order, which is how oslo.config's
// MultiStrOpt reads a list. [Merge] overlays user overrides (a CR's extraConfig) on the
// operator's defaults, per option, without touching either input; [LiftSections]
// turns the single-valued map a CRD usually carries into [Sections].
//
// Whatever [RenderINI] accepts, oslo.config parses back to the same data: a value
// spanning several lines is written with indented continuation lines (oslo.config joins
// them with "\n"), and a first line that oslo.config would strip or unquote (leading or
// trailing white space, or enclosed in matching quotes) is wrapped in double quotes,
// which oslo.config removes again; one blank line separates sections. Input that
// cannot survive the round trip is refused with an error naming the section and option,
// so user input can never inject a section or an option. Names that are empty, not valid
// UTF-8, start or end with white space, or contain a line break (LF or CR), "[", "]" or
// "=" wrap [ErrInvalidName], and so do option names containing ":" (oslo.config
// splits on it too) or starting with "#" or ";" (a comment). Values with a carriage
// return, an empty or white-space-padded continuation line (a trailing newline
// included), or invalid UTF-8 wrap [ErrUnrepresentableValue]. Errors never quote a
// value, since rendered configuration often carries credentials.
//
// # Immutable, content-addressed objects
//
// [CreateImmutableConfigMap] and [CreateImmutableSecret] name the object
// baseName-<hash>, where hash is the first 8 hex characters of a SHA-256 over the
// sorted, length-prefixed keys and values ([ContentHash]). A change of configuration
// is therefore a new name, a new pod template and a rollout; the same configuration
// always maps to the same, already existing object. Each object is Immutable, carries
// the label [ConfigBaseLabel] = baseName and a controller reference to its owner.
//
// The object is read first and created only when it is missing; a create that meets
// AlreadyExists (created since the read, or not in the cache yet) reads it again past
// the cache. An existing object is reused only when the owner controls it and it holds
// the data immutably; otherwise nothing is written and it is left as it is. Ownership
// follows the SDK's rule (package [apply], "Ownership"): an object the owner does not
// control is refused with [ErrForeignObject] (wrapping [apply.ErrNotControlled]), one
// being deleted with [apply.ErrBeingDeleted] (the caller retries and creates it again
// once it is gone, rather than taking for present a configuration about to vanish), and
// one without a controller that carries [apply.AdoptAnnotation] = "true" and holds the
// data immutably is adopted: an optimistic-lock patch of its metadata adds the owner and
// [ConfigBaseLabel]. One holding other data (a hash collision) or not immutable is
// refused with [ErrContentMismatch].
//
// Input that cannot succeed is refused before any API call: a nil scheme
// ([apply.ErrNilScheme], never a panic), a base name that makes no valid object name and
// label value ([ErrInvalidBaseName]), an empty namespace ([ErrInvalidNamespace]), and a
// nil, never persisted or unsuitable owner ([apply.ErrNilOwner],
// [apply.ErrOwnerNotPersisted], [apply.ErrInvalidOwner]). API errors are wrapped with the
// object's namespace and name; no error quotes the data, which is not modified.
//
// Through an apply.Applier with ApplierOptions.Remote (a target cluster; see "Target
// clusters" in package [apply]) each object carries the owner's claim labels and
// annotation instead of a controller reference, and "controls" means "claims"
// (apply.IsControlled), for creation, adoption and pruning alike. Nothing on a target
// cluster deletes these objects with their owner: the operator sweeps them itself, by
// apply.ClaimLabels.
//
// # Pruning
//
// [PruneImmutableConfigMaps] and [PruneImmutableSecrets] delete the history of a base
// name that the owner controls, keeping the current object and the newest retain
// others (newest by CreationTimestamp, ties broken by name). An object the owner does
// not control is never deleted, and each delete is conditioned on the UID that was
// listed. The name of the current object is required ([ErrInvalidCurrentName]): a
// prune without it could delete the object the workloads mount. The *WithOptions
// variants take [PruneOptions]; with SpareInUse set (as in [DefaultPruneOptions])
// they also keep every candidate that a workload of the namespace still references
// (Pods, the templates of Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs and
// CronJobs, and the StatefulSet and DaemonSet revisions in ControllerRevisions), so a
// rollback or a slow rollout never loses its configuration. A consequence: a Deployment
// keeps spec.revisionHistoryLimit old ReplicaSets (Kubernetes' default is 10), and each
// keeps the ConfigMap it mounts, so up to 10 old ConfigMaps stay whatever the retain
// count. Set revisionHistoryLimit to the retain count ([DefaultRetain], as
// deployment.DefaultRevisionHistoryLimit is) to keep no more than the prune retains.
//
// # API access
//
// [CreateImmutableConfigMap] gets the ConfigMap and creates it only when it is missing
// (reading it again, past the cache, when the create meets AlreadyExists) and, to
// adopt one, patches it; [CreateImmutableSecret] does the same with Secrets. The prune
// functions list ConfigMaps (or Secrets, as metadata only), delete them, and get one
// again when a delete meets a Conflict; with SpareInUse they also list Pods,
// ReplicaSets, Deployments, StatefulSets, DaemonSets and ControllerRevisions (group
// apps) and Jobs and CronJobs (group batch) in the namespace, but only when there is
// something to delete. All reads go through the client passed in: with a manager's
// cached client each listed kind starts an informer.
//
// Every write is reported through apply.Record — a create as apply.ActionCreated, an
// adoption as apply.ActionConfigured, a pruned object as apply.ActionDeleted — so a
// reconciler that collects its writes with apply.WithWrites sees them with the rest;
// a call that finds everything in place records nothing. Writes through an
// apply.Applier carry the operator's field manager.
//
// A converged pass — the current object exists, nothing is left to prune — writes
// nothing. Through an apply.Applier over a manager's cached client it sends no request
// at all: the read is served by the ConfigMap (or Secret) informer and the prune's list
// by a metadata informer. Through an uncached client it costs one GET and one LIST. A
// manager that reads Secrets past its cache (an operator without an Applier adds Secrets
// to reconcile.UncachedObjects) pays one GET per [CreateImmutableSecret] call.
//
// # Footprint
//
// Per helper: what it reads and writes, which reads start an informer when the client is
// a manager's cached client (a typed Get or List through mgr.GetClient() does; a read as
// unstructured, or through an APIReader, does not), and the RBAC verbs it needs, as
// the +kubebuilder:rbac markers in rbac.go grant them (rbac/config/role.yaml). list and
// watch come with every get: a cached read lists and watches the kind.
//
//   - [CreateImmutableConfigMap]: gets the ConfigMap (informer: ConfigMaps), creates it
//     when missing, gets it again as unstructured after AlreadyExists (no informer),
//     patches it to adopt one. RBAC: configmaps get, list, watch, create, patch.
//   - [CreateImmutableSecret]: the same with Secrets. RBAC: secrets get, list, watch,
//     create, patch.
//   - [PruneImmutableConfigMaps], [PruneImmutableConfigMapsWithOptions]: list ConfigMaps
//     as metadata (informer: a metadata informer for ConfigMaps), delete the stale ones,
//     get one as metadata after a Conflict. RBAC: configmaps list, watch, delete, get.
//   - [PruneImmutableSecrets], [PruneImmutableSecretsWithOptions]: the same with Secrets.
//     RBAC: secrets list, watch, delete, get.
//   - with PruneOptions.SpareInUse (as in [DefaultPruneOptions]), only when there is
//     something to delete, the prune also lists Pods, ReplicaSets, Deployments,
//     StatefulSets, DaemonSets, ControllerRevisions, Jobs and CronJobs of the namespace
//     (informer: one per kind). RBAC: list, watch on pods; on apps deployments,
//     statefulsets, daemonsets, replicasets, controllerrevisions; on batch jobs, cronjobs.
//   - [RenderINI], [Merge], [LiftSections], [ContentHash], [ValidateBaseName]: no API
//     call, no RBAC.
//
// A converged pass costs what is said above: no request through an apply.Applier over a
// manager's cached client, one GET and one LIST through an uncached client.
package config
