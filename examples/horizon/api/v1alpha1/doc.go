// Package v1alpha1 holds the Horizon custom resource of the example Horizon operator:
// the OpenStack dashboard's image and replica count, the Keystone it talks to, where its
// Django SECRET_KEY lives in the secret backend, its cache, single sign-on and domain
// settings, free-form Django settings, and how it is exposed (Gateway API HTTPRoute),
// scaled (HorizontalPodAutoscaler, VerticalPodAutoscaler) and fenced (NetworkPolicy).
// Its status reports conditions, the in-cluster endpoint and the settings ConfigMap.
// spec.websso.identityBackends names KeystoneIdentityBackends of the Keystone example
// (in the Horizon's namespace) whose registered identity providers the login page
// offers; neither this package nor the controller imports the Keystone example's
// types: the controller reads the backends as unstructured objects.
//
// Horizon embeds the SDK's shared blocks from github.com/c5c3/reconciler-sdk/api/v1
// (commonv1): spec.secretStoreRef selects the External Secrets Operator store and
// spec.targetClusterRef the cluster the dashboard runs on.
//
// The package only describes the API; the condition types and reasons are the
// controller's vocabulary. `make generate` writes its deepcopy functions
// (zz_generated.deepcopy.go) and its CRD (../../config/crd/bases) with controller-gen;
// ../../config/samples holds a minimal and a full Horizon.
//
// +kubebuilder:object:generate=true
// +groupName=horizon.openstack.c5c3.io
package v1alpha1
