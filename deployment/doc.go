// Package deployment manages the workload children of an OpenStack service operator:
// the Deployment, its Service and PodDisruptionBudget, and the optional
// HorizontalPodAutoscaler and VerticalPodAutoscaler.
//
// Every helper writes through Server-Side Apply (package apply, field manager
// apply.FieldManager) with the owner as controller, so a converged child is not
// rewritten and Kubernetes garbage collection reclaims the children with their owner.
// Pass a freshly built desired object on every call.
//
//   - [EnsureDeployment] applies a Deployment and reports readiness as data
//     ([IsDeploymentReady]). It re-creates the Deployment when its immutable selector
//     changes (only one the owner controls), and keeps the replica count an autoscaler
//     set when the desired spec.replicas is nil.
//   - [EnsureService] applies a Service and leaves the fields the API server assigns
//     (clusterIP, clusterIPs, ipFamilies, nodePort) to it; a desired value that
//     contradicts an assigned one is refused before any write ([ErrImmutableField]).
//   - [EnsurePodDisruptionBudget] applies a PodDisruptionBudget.
//
// # Optional-child flows
//
// [HPAFlow] and [VPAFlow] are the flows for children a custom resource may opt into,
// on the optional-child mechanism of package [child], whose rules (ownership, the
// outcome, the requests) hold here. They answer (reconcile.Outcome, error):
//
//	Condition  True reasons                    False reasons
//	HPAReady   HPAReady, HPANotRequired        none: errors propagate
//	VPAReady   VPAReady, VPANotRequired        VPANotInstalled, CapabilityProbeFailed, VPAError
//
// The VPA flow is the set form: it probes whether the cluster serves the
// VerticalPodAutoscaler kind, applies every wanted VPA and prunes the owner's others.
// [ReconcileHPA] is the HPA flow answering its condition alone.
//
// # Building the usual children
//
// [HTTPService] (one named HTTP port to the pods' port of that name), [OneUnavailablePDB]
// (a drain evicts one pod at a time) and [CPUAutoscaler] (an HPA on CPU utilization
// between a CR's bounds, [DefaultTargetCPUUtilization] when it names none) build what
// [EnsureService], [EnsurePodDisruptionBudget] and [HPAFlow] apply, from the
// object's name, labels and pod selector. Give a Deployment whose pods mount
// content-addressed configuration spec.revisionHistoryLimit
// [DefaultRevisionHistoryLimit], so that its old ReplicaSets keep no more old
// ConfigMaps alive than the configuration prune retains; a step polls a Deployment that
// is not ready every [PollInterval].
// [Workload] builds such a Deployment and [HTTPProbes] an HTTP container's probes.
//
// # Readiness
//
// [IsDeploymentReady] counts a Deployment as ready only when its status describes the
// current spec (status.observedGeneration >= metadata.generation), every desired
// replica runs the current pod template and is ready (updatedReplicas and
// readyReplicas >= spec.replicas, default 1), and its Available condition is True.
// Right after a change of the pod template the old pods still serve, but the Deployment
// is not ready until the rollout has replaced them; an autoscaler's replica count is
// the desired count once it is written to spec.replicas.
//
// # Never taking what is not ours
//
// No helper writes over, deletes or re-creates an object that the owner does not
// control. An existing object of the desired name that was made by kubectl or Helm (no
// controller) or that another object controls is refused with an error wrapping
// apply.ErrNotControlled; the error is a *apply.NotControlledError that names the
// current controller (or says there is none), and nothing is written. An uncontrolled
// object carrying the annotation apply.AdoptAnnotation ("true") is adopted by the
// applying helpers (see package apply), but [EnsureDeployment] never deletes one to
// change its selector: consent to adoption is no consent to deleting its pods. An
// object of the owner's that is being deleted is waited for by EnsureDeployment
// ((false, nil), re-created once gone) and refused with apply.ErrBeingDeleted by the
// other applying helpers; one of someone else's that is being deleted is refused with
// apply.ErrBeingDeleted. The delete of a selector change is preconditioned on the UID
// that was read, so a Deployment re-created in between is never removed. The flows
// follow the same rules, written once in package [child]. A nil *runtime.Scheme is
// refused with apply.ErrNilScheme before any request.
//
// # Requests and caches
//
// Every applying helper first reads the object through the client it is given (the
// control check of apply.EnsureObject), so with a manager's cached client it reads
// from an informer for that kind: Deployments, Services, PodDisruptionBudgets,
// HorizontalPodAutoscalers and VerticalPodAutoscalers. EnsureDeployment reads the
// Deployment once more itself; through a plain client a converged EnsureDeployment
// costs two GETs and one no-op PATCH, the other helpers one GET and one no-op PATCH per
// object. The VPA flow also lists VerticalPodAutoscalers in the owner's namespace, and
// asks the client's RESTMapper whether the kind is served.
//
// Pass an apply.Applier over the manager's cached client and a converged pass sends no
// request at all: every read is served by an informer, the RESTMapper answers from what
// it discovered before, and the Applier skips the converged applies. One exception: on
// a cluster that does not serve the VerticalPodAutoscaler kind, a manager's RESTMapper
// asks discovery again (one GET) on every VPAFlow call. The children are
// then applied under the operator's field manager (ApplierOptions.FieldManager), which
// is also the manager whose ownership of spec.replicas EnsureDeployment checks. Every
// write is reported through apply.Record — the applies, and the deletes of a selector
// change, of an HPA or of a VPA no longer wanted — so a reconciler that collects its
// writes with apply.WithWrites sees them all.
//
// The VerticalPodAutoscaler types are k8s.io/autoscaler/vertical-pod-autoscaler
// (autoscaling.k8s.io/v1); register them in the manager's scheme with
// vpav1.AddToScheme.
//
// # Footprint
//
// Per helper: what it reads and writes, which reads start an informer when the client is
// a manager's cached client (a typed Get or List through mgr.GetClient() does; a read as
// unstructured, or through an APIReader, does not), and the RBAC verbs it needs, as
// the +kubebuilder:rbac markers in rbac.go grant them (rbac/deployment/role.yaml). list and
// watch come with every get: a cached read lists and watches the kind.
//
//   - [EnsureDeployment]: gets the Deployment twice (its own read and the control check;
//     informer: Deployments), applies it; on a selector change deletes it and gets it
//     again. RBAC: apps deployments get, list, watch, create, patch, delete.
//   - [EnsureService]: gets the Service (the control check, and once more when the desired
//     object sets clusterIP, clusterIPs, ipFamilies or a nodePort; informer: Services),
//     applies it. RBAC: services get, list, watch, create, patch.
//   - [EnsurePodDisruptionBudget]: gets and applies the PodDisruptionBudget (informer:
//     PodDisruptionBudgets). RBAC: policy poddisruptionbudgets get, list, watch, create,
//     patch.
//   - [HPAFlow], [ReconcileHPA]: gets and applies the HorizontalPodAutoscaler, or gets and
//     deletes it when not wanted (informer: HorizontalPodAutoscalers). RBAC: autoscaling
//     horizontalpodautoscalers get, list, watch, create, patch, delete.
//   - [VPAFlow]: asks the client's RESTMapper whether the kind is served, gets and
//     applies each VerticalPodAutoscaler, lists those of the owner's namespace and deletes
//     the ones no longer wanted (informer: VerticalPodAutoscalers). RBAC:
//     autoscaling.k8s.io verticalpodautoscalers get, list, watch, create, patch, delete.
//   - [IsDeploymentReady]: no API call.
//
// A converged pass costs what "Requests and caches" says: through a plain client two GETs
// and one no-op PATCH for EnsureDeployment, one GET and one no-op PATCH per object for the
// other helpers; through an apply.Applier over a manager's cached client no request.
package deployment
