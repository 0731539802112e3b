package v1

// TargetClusterRefSpec names the registered target cluster a CR's children are written
// to. Embed it as an optional pointer (spec.targetClusterRef): a CR that omits it keeps
// its children on the management cluster.
type TargetClusterRefSpec struct {
	// Name of the target cluster, as registered with the operator's cluster provider.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}
