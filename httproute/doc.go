// Package httproute is the HTTPRoute flow of an operator whose CR may expose its API
// through a Gateway API (v1) Gateway: the spec.gateway lifecycle of the Horizon
// reconciler, reusable by any operator.
//
// [Reconcile] runs the three-way flow for one HTTPRoute and returns the HTTPRouteReady
// condition as data (type, status, reason, message; the caller stamps
// observedGeneration):
//
//   - no route wanted (desired is nil): the HTTPRoute is deleted if the owner controls
//     it; True, [ReasonNotRequired]. This holds on a cluster without the Gateway API
//     too, so a CR that does not use a Gateway is never blocked by its absence.
//   - a route wanted, but the cluster does not serve HTTPRoute (the Gateway API CRDs are
//     not installed): False, [ReasonGatewayAPINotInstalled], no requeue and no error:
//     nothing is written and the controller keeps running. A later install is noticed
//     on the next pass (see package capability).
//   - a route wanted and the probe cannot tell (discovery failed): False,
//     [ReasonCapabilityProbeFailed], and the error, wrapping capability.ErrProbeFailed,
//     so that the request is retried with back-off.
//   - a route wanted and served: the HTTPRoute is applied through Server-Side Apply
//     (apply.EnsureObject under apply.FieldManager, the owner as controller) and the
//     Gateway's verdict is mirrored: True, [ReasonAccepted] once every parentRef's
//     Gateway has set Accepted=True for the route's current generation; otherwise
//     False, [ReasonNotAccepted] with a requeue after [AcceptancePollInterval] (10 s),
//     and a message carrying the Gateway's own reason and message when it rejected
//     the route.
//
// The kind is probed with the RESTMapper of the client passed in, so the verdict
// follows the cluster the route lands on: pass the target cluster's client for a CR
// with a target cluster.
//
// # Watches
//
// Register the HTTPRoute watch (Owns(&gatewayv1.HTTPRoute{})) only when the management
// cluster serves the kind, so that the controller starts without the Gateway API:
//
//	served, err := capability.IsKindServed(mgr.GetRESTMapper(), httproute.GVK)
//
// That setup probe answers for CRs whose children land on the management cluster;
// [Reconcile] probes the cluster of the client it is given on every pass, so a CR whose
// children land on a target cluster gets that cluster's verdict. Without a watch (a
// target cluster, or a Gateway API installed after start-up) the 10 s requeue while the
// route is not accepted, and the controller's periodic resync for GatewayAPINotInstalled,
// bring the verdict in.
//
// # Routes of others
//
// The flow never takes over, writes over or deletes an HTTPRoute the owner does not
// control. A wanted route whose name is taken by an HTTPRoute without a controller
// (made by kubectl or Helm) or with another one is refused with an error wrapping
// apply.ErrNotControlled that names its controller, and one that is being deleted with
// apply.ErrBeingDeleted; the existing route is left as it is. When no route is wanted,
// only a route the owner controls is deleted; any other is left in place and the
// message says so.
//
// # Errors
//
// A call never returns a non-zero ctrl.Result together with an error. A nil owner or
// *runtime.Scheme is refused before any API call (apply.ErrNilOwner,
// apply.ErrNilScheme). When it returns
// an error, the condition is the CapabilityProbeFailed condition described above or
// the zero value (Type ""), which means "leave the condition as it is": API errors of
// the apply or delete propagate, as the condition table has no False reason for them.
//
// # Building the route
//
// [Spec] is the gateway block a CR embeds (parentRef, hostnames, path); [Build] turns it
// and the operator's [Backend] Service into the desired HTTPRoute, refusing bad input
// with an error that names the field. Callers that need more (several rules, filters)
// build the *gatewayv1.HTTPRoute themselves and pass it to [Reconcile]. [ReconcileSpec]
// is the whole row of a CR that embeds the block: build (when the block is set), label,
// reconcile.
//
// Register the Gateway API types in the scheme (gatewayv1.Install).
//
// # Footprint
//
// Per helper: what it reads and writes, which reads start an informer when the client is
// a manager's cached client (a typed Get or List through mgr.GetClient() does; a read as
// unstructured, or through an APIReader, does not), and the RBAC verbs it needs, as
// the +kubebuilder:rbac markers in rbac.go grant them (rbac/httproute/role.yaml). list and
// watch come with every get: a cached read lists and watches the kind.
//
//   - [Reconcile]: asks the client's RESTMapper whether HTTPRoute is served (discovery, no
//     informer); when a route is wanted, gets it (the control check; informer: HTTPRoutes)
//     and applies it; when none is wanted, gets it and deletes it if the owner controls it.
//     RBAC: gateway.networking.k8s.io httproutes get, list, watch, create, patch, delete.
//   - [Accepted], [Build]: no API call.
package httproute
