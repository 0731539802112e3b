// Package httproute is the HTTPRoute flow of an operator whose custom resource may
// expose its API through a Gateway API (v1) Gateway.
//
// [Flow] runs it for one HTTPRoute on the optional-child mechanism of package [child],
// whose rules (never taking what is not the owner's, the outcome, the requests) hold
// here, and answers the HTTPRouteReady condition:
//
//   - no route wanted (desired nil): the owner's HTTPRoute is deleted; True,
//     [ReasonNotRequired], on a cluster without the Gateway API too.
//   - a route wanted, the cluster does not serve HTTPRoute: False,
//     [ReasonGatewayAPINotInstalled], no error, nothing written.
//   - a route wanted, discovery failed: False, [ReasonCapabilityProbeFailed], and the
//     error (wrapping capability.ErrProbeFailed).
//   - a route wanted and served: it is applied, and the Gateways' verdict ([Accepted])
//     is mirrored: True, [ReasonAccepted] once every parentRef's Gateway accepted the
//     route's current generation; otherwise False, [ReasonNotAccepted] with a requeue
//     after [AcceptancePollInterval] and the Gateway's reason and message when it
//     rejected the route.
//
// Other errors come with the zero condition. The kind is probed with the RESTMapper of
// the client passed in, so the verdict follows the cluster the route lands on: pass the
// target cluster's client for a custom resource with a target cluster.
//
// # Watches
//
// Register the HTTPRoute watch (Owns(&gatewayv1.HTTPRoute{})) only when the management
// cluster serves the kind, so that the controller starts without the Gateway API:
//
//	served, err := capability.IsKindServed(mgr.GetRESTMapper(), httproute.GVK)
//
// Without a watch (a target cluster, or a Gateway API installed after start-up) the
// requeue while the route is not accepted, and the controller's periodic resync for
// GatewayAPINotInstalled, bring the verdict in.
//
// # Building the route
//
// [Spec] is the gateway block a custom resource embeds (parentRef, hostnames, path);
// [Build] turns it and the operator's [Backend] Service into the desired HTTPRoute,
// refusing bad input with an error wrapping [ErrInvalidSpec] that names the field.
// [SpecFlow] is the whole row of a custom resource that embeds the block: build (when
// the block is set), label, run the flow. Callers that need more (several rules,
// filters) build the *gatewayv1.HTTPRoute themselves and pass it to [Flow]. Register
// the Gateway API types in the scheme (gatewayv1.Install).
//
// # Footprint
//
// What each helper reads and writes, and the RBAC verbs it needs, as the
// +kubebuilder:rbac markers in rbac.go grant them (rbac/httproute/role.yaml). A typed
// read through a manager's cached client starts an informer, hence list and watch.
//
//   - [Flow], [SpecFlow]: ask the client's RESTMapper whether HTTPRoute is served
//     (discovery, no informer); when a route is wanted, get it (the control check;
//     informer: HTTPRoutes) and apply it; when none is wanted, get it and delete it if
//     the owner controls it. RBAC: gateway.networking.k8s.io httproutes get, list,
//     watch, create, patch, delete.
//   - [Accepted], [Build]: no API call.
package httproute
