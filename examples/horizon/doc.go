// Package horizon is the example Horizon operator (the OpenStack dashboard) built only
// from reconciler-sdk's public packages, laid out as a kubebuilder project. It imports
// no other example: the Keystone example's KeystoneIdentityBackends, whose identity
// providers become login choices, are read as unstructured objects, decoding only the
// fields the login page needs, so the directory can be copied on its own:
//
//   - api/v1alpha1: the Horizon custom resource (group horizon.openstack.c5c3.io) with
//     kubebuilder markers for the CRD, its CEL rules and defaults;
//   - settings: local_settings.py rendering (pure Go, golden files, checked to be valid
//     Python) and FromSpec, the mapping from a Horizon;
//   - controller: the Reconciler, a step table run by package reconcile (Secrets,
//     WebSSO, Config, Deployment, the prune, then HTTPRoute, HealthCheck, HPA, VPA and
//     NetworkPolicy), target clusters through package multicluster, its watches and its
//     +kubebuilder:rbac markers, with its envtest suite on the test kit's real
//     controllers;
//   - webhook: the defaulting and validating admission webhook;
//   - cmd: main.go, which runs the operator against any cluster;
//   - config: what `make generate` writes with controller-gen (the CRD, the ClusterRole
//     horizon-operator, the webhook configurations) and sample Horizons.
//
// `make demo` runs this operator on an embedded control plane. The package itself holds
// no code.
package horizon
