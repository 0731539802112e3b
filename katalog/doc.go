// Package katalog reads Katalogs: YAML files that declare a whole operator (which custom
// resources it watches, how they are validated and defaulted, which Deployments, Services,
// Secrets, ConfigMaps, ServiceAccounts, Jobs and CronJobs it creates for each of them,
// and how it writes their status) without Go code.
//
// Load, Parse and LoadAll decode a Katalog into the Go types of this package and check it
// completely before anything runs, so that a Katalog that loads can be run without
// surprises, and one that does not is refused with every problem listed. NewEngine runs
// loaded Katalogs on a controller-runtime manager (see "Running Katalogs").
//
// # The format in brief
//
//	apiVersion: orkestra.orkspace.io/v1
//	kind: Katalog
//	metadata:
//	  name: platform
//	spec:
//	  crds:
//	    application:                 # the CRD's short name: a DNS label
//	      apiTypes: {group: platform.io, version: v1alpha1, kind: Application, plural: applications}
//	      workers: 10                # concurrent reconciles (default 1)
//	      resync: 30s                # periodic re-reconcile (default 15s)
//	      dependsOn:
//	        database: healthy        # start after database is healthy (or synced)
//	      validation:
//	        rules:
//	          - {field: spec.image, operator: exists, action: deny}
//	      mutation:
//	        rules:
//	          - {field: spec.replicas, default: 2}
//	      operatorBox:
//	        cross:                   # read another CRD's custom resource: .cross.db
//	          - {crd: database, selector: {name: "{{ .metadata.name }}"}, as: db}
//	          # another namespace only with the Katalog author's allowCrossNamespace:
//	          - {crd: database, selector: {name: shared, namespace: "{{ .spec.dbNamespace }}"},
//	             as: shared, allowCrossNamespace: true}
//	        onCreate:                # created once; onReconcile: kept as declared
//	          external:              # HTTP calls, results in .external.<name>
//	            - {name: registry-check, url: "...", expectedStatus: 200}
//	          deployments:
//	            - name: "{{ .metadata.name }}"
//	              image: "{{ .spec.image }}"
//	              when:              # all must hold; anyOf: at least one
//	                - {field: "{{ phase .cross.db }}", equals: Ready}
//	          secrets:
//	            - name: "{{ .metadata.name }}-credentials"
//	              once: true         # generated values are never regenerated
//	              data: {password: "{{ randomAlphanumeric 32 }}"}
//	        status:
//	          fields:                # later entries win: declare terminal states last
//	            - path: phase
//	              value: Ready
//	              when:
//	                - {field: children.deployment.status.readyReplicas, greaterThan: "0"}
//
// Strings that name or configure objects are Go text/template templates (type Template)
// with the functions of FuncMap; they render against the data of one reconcile:
// .metadata, .spec and .status of the custom resource, .cross, .external, .children and,
// under forEach, the current element (.item, or the name as: gives), its position .index
// and, over a map, the key's .value. Conditions (type Condition) test a dot path or a
// template's output with one of Operators, written as a key (equals: "200") or as
// operator: with value:.
//
// # What is checked at load time
//
// Decoding is strict. Each problem is a *LoadError naming the file, the line and the YAML
// path (for example app.yaml:14: spec.crds.application.operatorBox.onCreate.deployments[0].foo:
// unknown field "foo"), wrapping a sentinel for errors.Is; all problems are returned
// together, joined with errors.Join in line order (LoadErrors splits them again):
//
//   - a field the format does not define (ErrUnknownField), a key given twice
//     (ErrDuplicateKey), a value of the wrong type or outside its allowed values
//     (ErrInvalidValue), a required field left out (ErrMissingField);
//   - a template that does not parse or calls an undefined function (ErrTemplate);
//   - a condition whose operator is not one of Operators, or that has none or two
//     (ErrUnknownOperator);
//   - a forEach as: that is no identifier or names a key of the template data
//     (metadata, spec, status, cross, external, children, value, index), which it
//     would shadow (ErrInvalidValue);
//   - dependsOn edges that form a cycle, named in full such as a -> b -> a
//     (ErrDependencyCycle), and dependsOn targets that are not in the Katalog
//     (ErrUnknownDependency);
//   - cross references to CRDs that are not in the Katalog (ErrUnknownCrossRef);
//     allowCrossNamespace without selector.namespace, or with a literal
//     selector.namespace that the target CRD's allowedNamespaces or
//     restrictedNamespaces exclude (ErrInvalidValue);
//   - two declarations of one kind whose names are equal for every custom resource:
//     names that are literal or use only {{ .metadata.name }}, in onCreate and
//     onReconcile together, unless their when conditions exclude each other, and an
//     onDelete Job named like an onCreate or onReconcile Job that way, whatever the
//     conditions (ErrDuplicateResource); duplicate cross aliases and external call
//     names (ErrDuplicateName);
//   - across files given to LoadAll, a CRD name or API type declared twice
//     (ErrDuplicateCRD).
//
// # Running Katalogs
//
// NewEngine registers one controller per enabled CRD entry, on unstructured custom
// resources, with Workers concurrent reconciles. One pass over a custom resource:
//
//  1. waits, with Ready False and reason WaitingForDependency naming the target, until
//     every dependsOn target is synced (its cache has synced) or healthy for the custom
//     resource's namespace: synced, and none of the last HealthWindow reconciles of the
//     target's custom resources in that namespace failed. A target that keeps failing in
//     one namespace holds back the custom resources of that namespace only. A custom
//     resource being deleted never waits for dependsOn;
//  2. being deleted: runs onDelete (its objects, then waits for its Jobs to finish) and
//     removes Finalizer, which a CRD with onDelete puts on every custom resource. A Job
//     that failed for good ends the wait too, so that a cleanup that cannot succeed does
//     not block the deletion forever; the failure is logged and reported by a Warning
//     event with reason ReasonOnDeleteJobFailed on the custom resource naming the Job.
//     onDelete is bounded in time: while it is not done (a call or write that fails, a
//     Job still running) Ready says when it gives up, and the first pass once
//     EngineOptions.OnDeleteGiveUpAfter (default 10 minutes, --ondelete-give-up-after)
//     has passed since the deletionTimestamp removes Finalizer
//     with a Warning event, reason ReasonOnDeleteAbandoned, naming the custom resource
//     and why. In a namespace being deleted, where nothing can be created, onDelete is
//     not run at all (no call, no Job): Finalizer is removed at once, with a Warning
//     event, reason ReasonOnDeleteSkipped. onDelete's Jobs carry OnDeleteJobAnnotation
//     with the custom resource's UID, and only such a Job ends the wait: another Job of
//     the name (an onCreate Job that ran long ago) fails the pass with
//     ErrOnDeleteJobConflict instead of passing for the cleanup;
//  3. applies the mutation defaults (Server-Side Apply of the missing fields under the
//     engine's field manager) before or after the validation rules, as mutateFirst says;
//     a failed deny rule ends the pass with Ready False, reason ValidationFailed, naming
//     the field; a failed warn rule emits a Warning event;
//  4. reads the cross references from the manager's cache, in the custom resource's own
//     namespace: a selector.namespace that renders another namespace reads nothing and
//     fails the pass with Ready False naming the cross entry and selector.namespace
//     (ErrCrossNamespace), because the custom resource's author, who writes the spec the
//     selector is rendered from, must not reach into other tenants' namespaces. The
//     Katalog's author opens this per cross entry with allowCrossNamespace: true; even
//     then only namespaces that the target CRD's allowedNamespaces and
//     restrictedNamespaces admit are read;
//  5. runs onCreate, then onReconcile: the external calls in order, then every declared
//     object whose when and anyOf conditions hold, once per forEach element. A forEach
//     expands to at most EngineOptions.MaxForEachElements elements per custom resource
//     (default DefaultMaxForEachElements, 256; --max-foreach-elements): a list or map
//     with more fails the pass with Ready False naming the declaration and the field
//     (ErrForEachTooLarge), and none of that declaration's repetitions is written (nor
//     anything pruned), so that one custom resource cannot flood the API server or hold
//     the CRD's workers. onCreate
//     objects and Jobs are created when missing and left alone when present and
//     controlled by the custom resource; one that is present but someone else's, without
//     a controller, or being deleted is never taken over or deleted: the pass fails with
//     Ready False naming it (apply.ErrNotControlled, apply.ErrBeingDeleted), unless it
//     has no controller and carries apply.AdoptAnnotation: then the custom resource
//     adopts it, applying the declaration once. Once Secrets are created a single time
//     and never rendered again (one that is present is left alone, whoever controls
//     it). onReconcile objects are applied on every pass (Server-Side Apply with the
//     custom resource as controller), so drift is repaired. A pass that rendered every
//     declaration then deletes the children the custom resource controls that no
//     declaration wants any more; objects it does not control are never touched. What
//     cannot be made again as it was is kept: an onCreate object, a Job or a once Secret
//     is deleted this way only when no declaration names it any more (its declaration,
//     or its forEach element, is gone), never because its when or anyOf conditions
//     stopped holding; those conditions gate its creation only. (Refusing conditions on
//     such objects at load time would have been the other way to keep them, but it
//     refuses Katalogs that hold a Deployment back until its database is ready);
//  6. reads its children back from the cache into .children (.children.<kind> the first
//     in name order, .children.<kind>s all; Secrets with their metadata only), writes the
//     status fields, last writer wins, and sets Ready (True, Reconciled; or False with the
//     error), and writes the status subresource when it changed, on every exit path. A
//     status write answered 404 is confirmed with the API reader: a custom resource that
//     is gone needs no status; one that is there belongs to a CRD without the status
//     subresource, and the pass fails with an error wrapping reconcile.ErrStatusNotServed.
//     A write answered 409 Conflict is merged into the custom resource read again through
//     the API reader three ways (reconcile.MergeStatus, as reconcile.RunPass does): Ready
//     and each status field the pass changed are written where the stored custom resource
//     still holds what the pass read; where another writer changed them since (a newer
//     pass, or the pass's own read served by a cache lagging behind), the stored value
//     stays, logged at V(1), and a pass without an error is reconciled again after
//     reconcile.StaleStatusRequeue. Conditions and fields the pass left alone keep their
//     stored values.
//
// Each of these is a step of a reconcile.Pipeline named "<crd>/<step>": dependsOn,
// validation and mutation (in the order mutateFirst gives), cross, onCreate, onReconcile,
// prune and status; onDelete replaces them while the custom resource is being deleted.
// With EngineOptions.Metrics every step records its duration and errors
// (<prefix>_reconcile_duration_seconds and <prefix>_reconcile_errors_total with the label
// sub_reconciler, MetricsPrefix in the katalog command); a denied custom resource counts
// as an error of its validation step. A failed step ends the pass, except that once the
// cross references are read the status step still runs: the status fields are written,
// and Ready stays False.
//
// A converged pass sends no request: everything it reads comes from the manager's cache
// and nothing it would write differs. A successful pass requeues after resync. A change
// of a cross-referenced custom resource reconciles the custom resources that read it:
// those whose cross declaration of its CRD has a selector that, rendered against their
// own .metadata, .spec and .status, names it (an empty selector.namespace is the reader's
// own namespace; another namespace only where step 4 reads it). A reader whose
// selector cannot be rendered that way (a template error, a selector that uses .cross)
// is reconciled too, when its cross declaration may read the changed object's namespace. allowedNamespaces and restrictedNamespaces are enforced three
// times: CacheOptions scopes the cache of a CRD with one allowed namespace, the
// controller drops the events of other namespaces, and the pass checks again.
//
// # External calls
//
// An external call (type ExternalCall) is an HTTP request a pass makes before it writes
// its group's objects; its result is .external.<name>: status (the status code, as
// text), body (the first MiB of the answer), error and called. A Katalog's URLs may be
// rendered from what a CR author writes, so the calls are confined by default:
//
//   - Where they go. Calls connect through EngineOptions.Outbound, an outbound.Policy:
//     by default a destination that is loopback, link-local (the cloud metadata address
//     169.254.169.254 among them), unspecified or multicast is refused, judged on the
//     address being dialled after name resolution, so "localhost" is refused too;
//     redirects are followed on the same host only (never to another host, nor from
//     https to http), and no proxy is used. A refused call is not sent: the pass fails
//     with Ready False, reason ReasonExternalCallRefused, and a message naming the call
//     and the refused host and address (or the host a redirect pointed at). The
//     administrator opens doors with Outbound's AllowCIDRs, AllowHosts and
//     AllowCrossHostRedirects (the katalog command's --outbound-allow and
//     --outbound-allow-cross-host-redirects). A client given as EngineOptions.HTTPClient
//     connects through its own Transport, but its redirects are checked by Outbound all
//     the same.
//   - How to write the URL. Fix the scheme and host in the Katalog and put CR values into
//     the path or the query escaped with urlquery, so that a value stays one path segment
//     or one query value:
//     url: "http://registry.registry.svc:5000/v2/{{ .spec.image | urlquery }}/manifests/latest".
//   - What a failure says. Ready and .external.<name>.error name the call and a coarse
//     class only: refused by the outbound policy, no answer (the connection failed, timed
//     out or broke), unexpected status (with the expected one), or a url that is not a
//     valid http or https URL. They never carry the status code, a dial error, a port, or
//     the URL's user info or query, so that the status of a custom resource cannot be
//     used to probe the network. The status code stays available to the Katalog as
//     .external.<name>.status; the engine's log has the method, the URL without user info
//     and query (outbound.Redact), the status and the cause (for a URL that does not
//     parse, no more than that: the parser's error would quote it).
//   - How many. One pass makes at most EngineOptions.ExternalCallsPerPass calls, its
//     groups together (DefaultExternalCallsPerPass, 16, by default; the katalog command's
//     --external-calls-per-pass); the call past it is not made, and the pass fails with
//     Ready False, reason ReasonExternalCallBudgetExceeded, naming the call and the
//     budget, continueOnError or not. Each call is bounded by its timeout (default 10s)
//     and the body it keeps by 1 MiB.
//   - onCreate's calls are made only until onCreate has created its objects: once every
//     object onCreate declares for the custom resource exists and is the custom
//     resource's (a once Secret, whoever's), its calls are not made again, and each
//     records called "false". In such a pass a condition of an onCreate object that reads
//     .external counts as holding (the object exists, so the answers admitted it); its
//     other conditions are evaluated as always, so an object whose other conditions stop
//     holding is still deleted. When an onCreate object is missing (deleted, or a new
//     forEach element), the calls are made again. An onCreate group without objects, or
//     whose object names or forEach fields read .external, makes its calls on every pass.
//     A call whose answer is needed on every pass belongs in onReconcile.
//
// # What is refused and why
//
// The provider blocks aws, mongodb, git and docker (ProviderBlocks) call services outside
// the cluster. This engine reconciles Kubernetes objects only, so a Katalog that uses one
// is refused with ErrProviderBlock naming the block, rather than run with that part of
// its behaviour silently missing. operatorBox.default: false, which selects Go hooks
// compiled into another engine's binary, is refused for the same reason. Every field of
// this package's types is accepted as written, so a Katalog written for the original
// engine that keeps to them and uses no provider block loads here unchanged.
//
// # Permissions
//
// ClusterRole returns the rules an engine running some Katalogs needs cluster-wide:
// their custom resources, the child kinds, events, get on Namespaces, and create on
// TokenReviews and SubjectAccessReviews (its /metrics, and its inspector beyond the
// loopback interface, let in only clients the API server authenticates and
// authorizes). Leader election's Lease is not in it: LeaseRole is a Role for the
// engine's own namespace (get, list, watch, create, update, patch on leases; no
// delete). `katalog rbac` prints both.
package katalog
