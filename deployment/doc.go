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
//     changes, and keeps the replica count an autoscaler set when the desired
//     spec.replicas is nil.
//   - [EnsureService] applies a Service and leaves the fields the API server assigns
//     (clusterIP, clusterIPs, ipFamilies, nodePort) to it; a desired value that
//     contradicts an assigned one is refused before any write ([ErrImmutableField]).
//   - [EnsurePodDisruptionBudget] applies a PodDisruptionBudget.
//
// # Optional-child flows
//
// [ReconcileHPA] and [ReconcileVPA] are three-way flows for children a CR may opt into.
// They return the condition to set (a metav1.Condition with Type, Status, Reason and
// Message; the caller stamps observedGeneration) and an error to propagate:
//
//	Condition  True reasons                    False reasons
//	HPAReady   HPAReady, HPANotRequired        none: errors propagate
//	VPAReady   VPAReady, VPANotRequired        VPANotInstalled, CapabilityProbeFailed, VPAError
//
// Not wanted: the child is deleted (only when the owner controls it) and the condition
// is True/NotRequired. Wanted: it is applied and the condition is True. The VPA flow
// first asks the cluster's RESTMapper whether it serves the VerticalPodAutoscaler kind
// (package capability), so an opt-in on a cluster without the VPA reports
// VPANotInstalled instead of failing, and it prunes the VPAs the owner controls that
// are no longer wanted.
//
// The VerticalPodAutoscaler types are k8s.io/autoscaler/vertical-pod-autoscaler
// (autoscaling.k8s.io/v1); register them in the manager's scheme with
// vpav1.AddToScheme.
package deployment
