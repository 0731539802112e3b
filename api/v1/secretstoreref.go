package v1

// SecretStoreRefKind is the kind of External Secrets Operator store a
// [SecretStoreRefSpec] selects.
// +kubebuilder:validation:Enum=ClusterSecretStore;SecretStore
type SecretStoreRefKind string

const (
	// ClusterSecretStoreKind selects a cluster-scoped ClusterSecretStore, looked up by
	// name alone. It is the default kind.
	ClusterSecretStoreKind SecretStoreRefKind = "ClusterSecretStore"
	// SecretStoreKind selects a namespaced SecretStore, looked up by name in the
	// namespace of the CR that embeds the reference.
	SecretStoreKind SecretStoreRefKind = "SecretStore"
)

// SecretStoreRefSpec selects the External Secrets Operator store a CR routes its
// ExternalSecrets and PushSecrets through. Embed it as an optional pointer
// (spec.secretStoreRef): a CR that omits it uses the shared cluster store, which
// secrets.EffectiveStoreRef resolves.
type SecretStoreRefSpec struct {
	// Kind of the store: ClusterSecretStore (cluster-scoped) or SecretStore (in the
	// namespace of this resource). Defaults to ClusterSecretStore.
	// +kubebuilder:default=ClusterSecretStore
	// +optional
	Kind SecretStoreRefKind `json:"kind,omitempty"`

	// Name of the store.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}
