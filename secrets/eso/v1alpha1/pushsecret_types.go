package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PushSecretStoreRef names a store a [PushSecret] writes to.
type PushSecretStoreRef struct {
	// Name of the SecretStore or ClusterSecretStore.
	// +optional
	Name string `json:"name,omitempty"`
	// Kind of the store, "SecretStore" (the server default) or "ClusterSecretStore".
	// +optional
	Kind string `json:"kind,omitempty"`
}

// PushSecretUpdatePolicy says how ESO treats a secret that already exists in the
// provider.
type PushSecretUpdatePolicy string

// Update policies.
const (
	// PushSecretUpdatePolicyReplace overwrites the provider's secret. It is the server
	// default.
	PushSecretUpdatePolicyReplace PushSecretUpdatePolicy = "Replace"
	// PushSecretUpdatePolicyIfNotExists writes only secrets the provider lacks.
	PushSecretUpdatePolicyIfNotExists PushSecretUpdatePolicy = "IfNotExists"
)

// PushSecretDeletionPolicy says what ESO does in the provider when the PushSecret is
// deleted.
type PushSecretDeletionPolicy string

// Deletion policies.
const (
	// PushSecretDeletionPolicyDelete deletes the pushed secrets from the provider.
	PushSecretDeletionPolicyDelete PushSecretDeletionPolicy = "Delete"
	// PushSecretDeletionPolicyNone keeps them. It is the server default.
	PushSecretDeletionPolicyNone PushSecretDeletionPolicy = "None"
)

// PushSecretSecret names the source Secret, in the PushSecret's namespace.
type PushSecretSecret struct {
	// Name of the Secret.
	// +optional
	Name string `json:"name,omitempty"`
}

// PushSecretSelector selects the source of the values to push; the mirror models a
// named Secret.
type PushSecretSelector struct {
	// Secret selects a Secret by name.
	// +optional
	Secret *PushSecretSecret `json:"secret,omitempty"`
}

// PushSecretRemoteRef locates the pushed value in the provider.
type PushSecretRemoteRef struct {
	// RemoteKey is the name of the provider secret (for OpenBao, its path).
	RemoteKey string `json:"remoteKey"`
	// Property is the property of the provider secret to write.
	// +optional
	Property string `json:"property,omitempty"`
}

// PushSecretMatch maps one key of the source Secret to a provider location.
type PushSecretMatch struct {
	// SecretKey is the key of the source Secret to push; empty pushes the whole
	// Secret.
	// +optional
	SecretKey string `json:"secretKey,omitempty"`
	// RemoteRef is where the value goes.
	RemoteRef PushSecretRemoteRef `json:"remoteRef"`
}

// PushSecretData is one value to push.
type PushSecretData struct {
	// Match maps a source key to a provider location.
	Match PushSecretMatch `json:"match"`
}

// PushSecretSpec is the desired state of a [PushSecret].
type PushSecretSpec struct {
	// RefreshInterval is how often ESO pushes again; the server defaults it to one
	// hour.
	// +optional
	RefreshInterval *metav1.Duration `json:"refreshInterval,omitempty"`
	// SecretStoreRefs are the stores to push to.
	SecretStoreRefs []PushSecretStoreRef `json:"secretStoreRefs"`
	// UpdatePolicy; the server defaults it to PushSecretUpdatePolicyReplace.
	// +optional
	UpdatePolicy PushSecretUpdatePolicy `json:"updatePolicy,omitempty"`
	// DeletionPolicy; the server defaults it to PushSecretDeletionPolicyNone.
	// +optional
	DeletionPolicy PushSecretDeletionPolicy `json:"deletionPolicy,omitempty"`
	// Selector selects the source Secret.
	Selector PushSecretSelector `json:"selector"`
	// Data lists the values to push.
	// +optional
	Data []PushSecretData `json:"data,omitempty"`
}

// PushSecretConditionType is the type of a [PushSecretStatusCondition].
type PushSecretConditionType string

// Condition type and reasons of a PushSecret.
const (
	// PushSecretReady is True once the values are pushed.
	PushSecretReady PushSecretConditionType = "Ready"
	// ReasonSynced: the values were pushed to the provider.
	ReasonSynced = "Synced"
	// ReasonErrored: pushing failed.
	ReasonErrored = "Errored"
)

// PushSecretStatusCondition is one condition of a [PushSecret]. ESO's conditions are
// not metav1.Condition: they have no observedGeneration.
type PushSecretStatusCondition struct {
	// Type of the condition.
	Type PushSecretConditionType `json:"type"`
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

// PushSecretStatus is the observed state of a [PushSecret].
type PushSecretStatus struct {
	// RefreshTime is when ESO last pushed.
	// +nullable
	RefreshTime metav1.Time `json:"refreshTime,omitempty"`
	// SyncedResourceVersion is the PushSecret version ESO last pushed.
	SyncedResourceVersion string `json:"syncedResourceVersion,omitempty"`
	// Conditions of the PushSecret; see [PushSecretReady].
	// +optional
	Conditions []PushSecretStatusCondition `json:"conditions,omitempty"`
}

// PushSecret writes the values of a Kubernetes Secret to the backend of one or more
// stores.
// +kubebuilder:object:root=true
type PushSecret struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec PushSecretSpec `json:"spec,omitempty"`
	// Status is the observed state, written by ESO.
	Status PushSecretStatus `json:"status,omitempty"`
}

// PushSecretList is a list of [PushSecret].
// +kubebuilder:object:root=true
type PushSecretList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the PushSecrets.
	Items []PushSecret `json:"items"`
}
