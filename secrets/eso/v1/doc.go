// Package v1 is the SDK's typed mirror of the External Secrets Operator kinds it uses
// at external-secrets.io/v1: [ExternalSecret], [SecretStore] and [ClusterSecretStore]
// (with their List types).
//
// # Why a mirror
//
// ESO's own Go module (v0.16 to v0.20) does not compile against controller-runtime
// v0.23 or later, and its split-out apis module is not served by the module proxy. So
// the SDK carries its own structs, checked against ESO v0.20.4's CRDs on envtest. Go
// field names, JSON names, enum values and condition constants are ESO's, so code and
// manifests written for ESO read the same here.
//
// # A partial mirror
//
// Only the fields the SDK reads and writes are modelled: an ExternalSecret's
// secretStoreRef, target (name, creationPolicy, deletionPolicy, a minimal template),
// refreshInterval, data and dataFrom[].extract, and its status; a store's status and,
// as opaque JSON, its spec.provider. Decoding ignores the fields the mirror lacks, so a
// mirror object read from the server does not carry them. Writing one back with Update
// would therefore drop them: write these kinds with Server-Side Apply
// (apply.EnsureObject), which sends only the fields that are set and leaves every field
// owned by another manager in place, and write status through the status subresource.
//
// # One scheme, one set of Go types
//
// [AddToScheme] registers these types under ESO's real group and version. A scheme maps
// each GroupVersionKind to exactly one Go type, so this mirror and ESO's own Go types
// (github.com/external-secrets/external-secrets/apis/externalsecrets/v1) cannot be
// registered in the same scheme: the second registration panics. A program that needs
// ESO's types must use them instead of this package, in a scheme of its own.
//
// +kubebuilder:object:generate=true
// +groupName=external-secrets.io
package v1
