// Package netpol is the NetworkPolicy flow of an operator whose custom resource may
// restrict the ingress traffic of its pods.
//
// [Flow] runs it for one NetworkPolicy on the optional-child mechanism of package
// [child], whose rules (never taking what is not the owner's, the outcome, the
// requests) hold here, and answers the NetworkPolicyReady condition:
//
//   - no policy wanted (desired nil): the owner's NetworkPolicy is deleted; True,
//     [ReasonNotRequired].
//   - a policy wanted: it is applied; True, [ReasonReady]. A NetworkPolicy has no status
//     to wait for: the network plugin enforces it once it is stored.
//
// The condition has no False reason: errors propagate with the zero condition.
//
// # Fail-closed on an empty ingress list
//
// A NetworkPolicy that governs ingress (spec.policyTypes empty or containing Ingress)
// but lists no ingress rules denies all ingress to the selected pods. A custom resource
// that asks for that almost always lost its rules by mistake (an empty list in a GitOps
// overlay, a templating error), and applying it would cut the service off. [Flow]
// refuses such a policy before any API call with an error wrapping [ErrEmptyIngress]:
// the existing NetworkPolicy stays as it is and the request is retried with back-off
// until the custom resource is fixed. To allow all ingress, list one empty rule ({});
// to drop the policy, stop wanting one (nil).
//
// # Footprint
//
// What each helper reads and writes, and the RBAC verbs it needs, as the
// +kubebuilder:rbac markers in rbac.go grant them (rbac/netpol/role.yaml). A typed read
// through a manager's cached client starts an informer, hence list and watch.
//
//   - [Flow]: when a policy is wanted, gets the NetworkPolicy (the control check;
//     informer: NetworkPolicies) and applies it; when none is wanted, gets it and deletes
//     it if the owner controls it. RBAC: networking.k8s.io networkpolicies get, list,
//     watch, create, patch, delete.
package netpol
