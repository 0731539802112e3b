// Package v1alpha1 is the SDK's typed mirror of External Secrets Operator's
// [PushSecret] at external-secrets.io/v1alpha1, the kind that writes a Kubernetes
// Secret's values back to the store's backend.
//
// It follows the same rules as the v1 mirror (github.com/c5c3/reconciler-sdk/secrets/eso/v1):
// ESO's Go field names, JSON names, enum values and condition constants; only the fields
// the SDK reads and writes (spec.secretStoreRefs, selector.secret.name, data[].match,
// updatePolicy, deletionPolicy, refreshInterval, and the status); written with
// Server-Side Apply so that fields the mirror lacks are never dropped.
//
// [AddToScheme] registers [PushSecret] under ESO's real group and version, so this
// mirror and ESO's own Go types
// (github.com/external-secrets/external-secrets/apis/externalsecrets/v1alpha1) cannot
// be registered in the same scheme.
//
// PushSecret is an unstable (alpha) ESO API: the mirror is checked against ESO v0.20.4's
// CRD and may need changes with later ESO releases.
//
// +kubebuilder:object:generate=true
// +groupName=external-secrets.io
package v1alpha1
