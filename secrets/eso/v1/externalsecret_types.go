package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SecretStoreRef names the store an [ExternalSecret] fetches its data from.
type SecretStoreRef struct {
	// Name of the SecretStore or ClusterSecretStore.
	Name string `json:"name,omitempty"`
	// Kind of the store: SecretStoreKind or ClusterSecretStoreKind. ESO treats an
	// empty kind as SecretStore.
	// +optional
	Kind string `json:"kind,omitempty"`
}

// ExternalSecretCreationPolicy says how ESO creates the target Secret.
type ExternalSecretCreationPolicy string

// Creation policies.
const (
	// CreatePolicyOwner creates the Secret with the ExternalSecret as its owner. It is
	// the server default.
	CreatePolicyOwner ExternalSecretCreationPolicy = "Owner"
	// CreatePolicyOrphan creates the Secret without an owner reference, so it outlives
	// the ExternalSecret.
	CreatePolicyOrphan ExternalSecretCreationPolicy = "Orphan"
	// CreatePolicyMerge does not create the Secret but merges the data into an
	// existing one.
	CreatePolicyMerge ExternalSecretCreationPolicy = "Merge"
	// CreatePolicyNone does not create a Secret.
	CreatePolicyNone ExternalSecretCreationPolicy = "None"
)

// ExternalSecretDeletionPolicy says what ESO does with the target Secret when the
// provider's secrets are gone.
type ExternalSecretDeletionPolicy string

// Deletion policies.
const (
	// DeletionPolicyDelete deletes the Secret.
	DeletionPolicyDelete ExternalSecretDeletionPolicy = "Delete"
	// DeletionPolicyMerge removes the keys but keeps the Secret.
	DeletionPolicyMerge ExternalSecretDeletionPolicy = "Merge"
	// DeletionPolicyRetain keeps the Secret. It is the server default.
	DeletionPolicyRetain ExternalSecretDeletionPolicy = "Retain"
)

// ExternalSecretTemplateMetadata is the metadata ESO puts on the target Secret.
type ExternalSecretTemplateMetadata struct {
	// Annotations of the target Secret.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// Labels of the target Secret.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// ExternalSecretTemplate is the blueprint of the target Secret; the mirror models its
// type, metadata and inline data templates (not templateFrom).
type ExternalSecretTemplate struct {
	// Type of the target Secret.
	// +optional
	Type corev1.SecretType `json:"type,omitempty"`
	// EngineVersion of the template engine; the server defaults it to "v2".
	// +optional
	EngineVersion string `json:"engineVersion,omitempty"`
	// Metadata of the target Secret.
	// +optional
	Metadata ExternalSecretTemplateMetadata `json:"metadata,omitempty"`
	// MergePolicy is "Replace" (server default) or "Merge".
	// +optional
	MergePolicy string `json:"mergePolicy,omitempty"`
	// Data maps target Secret keys to templates over the fetched values.
	// +optional
	Data map[string]string `json:"data,omitempty"`
}

// ExternalSecretTarget is the Secret an [ExternalSecret] writes.
type ExternalSecretTarget struct {
	// Name of the Secret; empty means the ExternalSecret's name.
	// +optional
	Name string `json:"name,omitempty"`
	// CreationPolicy of the Secret; the server defaults it to CreatePolicyOwner.
	// +optional
	CreationPolicy ExternalSecretCreationPolicy `json:"creationPolicy,omitempty"`
	// DeletionPolicy of the Secret; the server defaults it to DeletionPolicyRetain.
	// +optional
	DeletionPolicy ExternalSecretDeletionPolicy `json:"deletionPolicy,omitempty"`
	// Template is the blueprint of the Secret.
	// +optional
	Template *ExternalSecretTemplate `json:"template,omitempty"`
}

// ExternalSecretDataRemoteRef locates a value in the provider.
type ExternalSecretDataRemoteRef struct {
	// Key of the secret in the provider (for OpenBao, its path).
	Key string `json:"key"`
	// Property selects one property of a structured provider value.
	// +optional
	Property string `json:"property,omitempty"`
	// Version selects a version of the provider value, where the provider has them.
	// +optional
	Version string `json:"version,omitempty"`
}

// ExternalSecretData maps one key of the target Secret to one provider value.
type ExternalSecretData struct {
	// SecretKey is the key in the target Secret.
	SecretKey string `json:"secretKey"`
	// RemoteRef locates the value in the provider.
	RemoteRef ExternalSecretDataRemoteRef `json:"remoteRef"`
}

// ExternalSecretDataFromRemoteRef fetches many keys at once; the mirror models
// extract (every property of one provider secret).
type ExternalSecretDataFromRemoteRef struct {
	// Extract copies every property of the provider secret into the target Secret.
	// +optional
	Extract *ExternalSecretDataRemoteRef `json:"extract,omitempty"`
}

// ExternalSecretSpec is the desired state of an [ExternalSecret].
type ExternalSecretSpec struct {
	// SecretStoreRef names the store to read from.
	// +optional
	SecretStoreRef SecretStoreRef `json:"secretStoreRef,omitempty"`
	// Target is the Secret to write.
	// +optional
	Target ExternalSecretTarget `json:"target,omitempty"`
	// RefreshInterval is how often ESO re-reads the provider; the server defaults it
	// to one hour, and zero means fetch once.
	// +optional
	RefreshInterval *metav1.Duration `json:"refreshInterval,omitempty"`
	// Data maps target keys to single provider values.
	// +optional
	Data []ExternalSecretData `json:"data,omitempty"`
	// DataFrom fetches many keys at once; entries merge in order.
	// +optional
	DataFrom []ExternalSecretDataFromRemoteRef `json:"dataFrom,omitempty"`
}

// ExternalSecretConditionType is the type of an [ExternalSecretStatusCondition].
type ExternalSecretConditionType string

// Condition types of an ExternalSecret.
const (
	// ExternalSecretReady is True once the target Secret is synced.
	ExternalSecretReady ExternalSecretConditionType = "Ready"
	// ExternalSecretDeleted reports that the target Secret was deleted.
	ExternalSecretDeleted ExternalSecretConditionType = "Deleted"
)

// Condition reasons ESO sets on an ExternalSecret.
const (
	// ConditionReasonSecretSynced: the target Secret is synced.
	ConditionReasonSecretSynced = "SecretSynced"
	// ConditionReasonSecretSyncedError: syncing the target Secret failed.
	ConditionReasonSecretSyncedError = "SecretSyncedError"
	// ConditionReasonSecretDeleted: the target Secret was deleted.
	ConditionReasonSecretDeleted = "SecretDeleted"
	// ConditionReasonSecretMissing: the target Secret is missing.
	ConditionReasonSecretMissing = "SecretMissing"
)

// ExternalSecretStatusCondition is one condition of an [ExternalSecret]. ESO's
// conditions are not metav1.Condition: they have no observedGeneration.
type ExternalSecretStatusCondition struct {
	// Type of the condition.
	Type ExternalSecretConditionType `json:"type"`
	// Status of the condition: True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// Reason is a one-word CamelCase reason.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message is a human-readable message.
	// +optional
	Message string `json:"message,omitempty"`
	// LastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ExternalSecretStatus is the observed state of an [ExternalSecret].
type ExternalSecretStatus struct {
	// RefreshTime is when ESO last fetched the values and updated the target Secret.
	// +nullable
	RefreshTime metav1.Time `json:"refreshTime,omitempty"`
	// SyncedResourceVersion is the ExternalSecret version ESO last synced.
	SyncedResourceVersion string `json:"syncedResourceVersion,omitempty"`
	// Conditions of the ExternalSecret; see [ExternalSecretReady].
	// +optional
	Conditions []ExternalSecretStatusCondition `json:"conditions,omitempty"`
	// Binding names the target Secret (a servicebinding.io Provisioned Service).
	Binding corev1.LocalObjectReference `json:"binding,omitempty"`
}

// ExternalSecret fetches values from a store's provider and writes them into a
// Kubernetes Secret.
// +kubebuilder:object:root=true
type ExternalSecret struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec ExternalSecretSpec `json:"spec,omitempty"`
	// Status is the observed state, written by ESO.
	Status ExternalSecretStatus `json:"status,omitempty"`
}

// ExternalSecretList is a list of [ExternalSecret].
// +kubebuilder:object:root=true
type ExternalSecretList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ExternalSecrets.
	Items []ExternalSecret `json:"items"`
}
