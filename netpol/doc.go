// Package netpol is the NetworkPolicy flow of an operator whose CR may restrict the
// ingress traffic of its pods: the spec.networkPolicy lifecycle of the Horizon
// reconciler, reusable by any operator.
//
// [Reconcile] runs the flow for one NetworkPolicy and returns the NetworkPolicyReady
// condition as data (type, status, reason, message; the caller stamps
// observedGeneration):
//
//   - no policy wanted (desired is nil): the NetworkPolicy is deleted if the owner
//     controls it; True, [ReasonNotRequired]. A policy the owner does not control is
//     left in place and the message says so.
//   - a policy wanted: it is applied through Server-Side Apply (apply.EnsureObject under
//     apply.FieldManager, the owner as controller); True, [ReasonReady]. A NetworkPolicy
//     has no status to wait for: the network plugin enforces it once it is stored.
//
// # Fail-closed on an empty ingress list
//
// A NetworkPolicy that governs ingress (spec.policyTypes empty or containing Ingress)
// but lists no ingress rules denies all ingress to the selected pods. A CR that asks for
// that almost always lost its rules by mistake (an empty list in a GitOps overlay, a
// templating error), and applying it would cut the service off. [Reconcile] refuses such
// a policy before any API call with an error wrapping [ErrEmptyIngress] that names the
// object and the field: whatever NetworkPolicy exists stays exactly as it is, the error
// propagates and the request is retried with back-off until the CR is fixed. To allow all
// ingress, list one empty rule ({}); to drop the policy, stop wanting one (nil).
//
// # Policies of others
//
// The flow never takes over, writes over or deletes a NetworkPolicy the owner does not
// control. A wanted policy whose name is taken by a NetworkPolicy without a controller
// (made by kubectl or Helm) or with another one is refused with an error wrapping
// apply.ErrNotControlled that names its controller, and one that is being deleted with
// apply.ErrBeingDeleted; the existing policy, and the traffic it allows, stay as they
// are.
//
// # Errors
//
// A nil owner or *runtime.Scheme is refused before any API call (apply.ErrNilOwner,
// apply.ErrNilScheme). The condition table has no False reason for this flow: errors
// propagate. When
// [Reconcile] returns an error the condition is the zero value (Type ""), which means
// "leave the condition as it is".
//
// # Footprint
//
// Per helper: what it reads and writes, which reads start an informer when the client is
// a manager's cached client (a typed Get or List through mgr.GetClient() does; a read as
// unstructured, or through an APIReader, does not), and the RBAC verbs it needs, as
// the +kubebuilder:rbac markers in rbac.go grant them (rbac/netpol/role.yaml). list and
// watch come with every get: a cached read lists and watches the kind.
//
//   - [Reconcile]: when a policy is wanted, gets the NetworkPolicy (the control check;
//     informer: NetworkPolicies) and applies it; when none is wanted, gets it and deletes
//     it if the owner controls it. RBAC: networking.k8s.io networkpolicies get, list,
//     watch, create, patch, delete.
package netpol
