// Package v1alpha1 holds the custom resources of the example Keystone operator:
//
//   - Keystone, the OpenStack identity service: its image and scale, the MariaDB
//     database it keeps its data in (with an optional cert-manager TLS certificate for
//     the connection), the fernet and credential key repositories and how they rotate,
//     the bootstrap of the admin account, the policy overrides, free-form keystone.conf
//     settings, and how it is exposed (Gateway API HTTPRoute) and scaled
//     (HorizontalPodAutoscaler);
//   - KeystoneIdentityBackend, a satellite of one Keystone: a domain whose users come
//     from a domain-specific identity driver (LDAP), projected into the Keystone's
//     domain configuration.
//
// Both embed the SDK's shared blocks from github.com/c5c3/reconciler-sdk/api/v1
// (commonv1) where they need them: spec.secretStoreRef selects the External Secrets
// Operator store and spec.targetClusterRef the cluster Keystone runs on. spec.gateway is
// the SDK's httproute.Spec.
//
// The package only describes the API; the condition types and reasons are the
// controllers' vocabulary. `make generate` writes its deepcopy functions and its CRDs
// (../../config/crd/bases) with controller-gen; ../../config/samples holds samples.
//
// +kubebuilder:object:generate=true
// +groupName=keystone.openstack.c5c3.io
package v1alpha1
