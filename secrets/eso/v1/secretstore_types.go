package v1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SecretStoreSpec is the desired state of a [SecretStore] or [ClusterSecretStore].
type SecretStoreSpec struct {
	// Provider configures the backend. The mirror keeps it opaque: it is the JSON of
	// ESO's spec.provider (exactly one provider key, e.g. {"vault": {...}}), passed
	// through unchanged. The SDK only reads store readiness, never the provider.
	Provider *apiextensionsv1.JSON `json:"provider"`
}

// SecretStoreConditionType is the type of a [SecretStoreStatusCondition].
type SecretStoreConditionType string

// Condition types and reasons of a store.
const (
	// SecretStoreReady is True when the store can serve requests.
	SecretStoreReady SecretStoreConditionType = "Ready"

	// ReasonInvalidStore: the store configuration is invalid.
	ReasonInvalidStore = "InvalidStoreConfiguration"
	// ReasonInvalidProviderConfig: the provider configuration is invalid.
	ReasonInvalidProviderConfig = "InvalidProviderConfig"
	// ReasonValidationFailed: validating the store against its backend failed.
	ReasonValidationFailed = "ValidationFailed"
	// ReasonValidationUnknown: the store could not be validated.
	ReasonValidationUnknown = "ValidationUnknown"
	// ReasonStoreValid: the store is valid.
	ReasonStoreValid = "Valid"
)

// SecretStoreStatusCondition is one condition of a store. ESO's conditions are not
// metav1.Condition: they have no observedGeneration.
type SecretStoreStatusCondition struct {
	// Type of the condition.
	Type SecretStoreConditionType `json:"type"`
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

// SecretStoreCapabilities says which operations a store supports.
type SecretStoreCapabilities string

// Store capabilities.
const (
	// SecretStoreReadOnly: the store can only read secrets.
	SecretStoreReadOnly SecretStoreCapabilities = "ReadOnly"
	// SecretStoreWriteOnly: the store can only write secrets.
	SecretStoreWriteOnly SecretStoreCapabilities = "WriteOnly"
	// SecretStoreReadWrite: the store can read and write (needed by PushSecret).
	SecretStoreReadWrite SecretStoreCapabilities = "ReadWrite"
)

// SecretStoreStatus is the observed state of a store.
type SecretStoreStatus struct {
	// Conditions of the store; see [SecretStoreReady].
	// +optional
	Conditions []SecretStoreStatusCondition `json:"conditions,omitempty"`
	// Capabilities of the store.
	// +optional
	Capabilities SecretStoreCapabilities `json:"capabilities,omitempty"`
}

// SecretStore is a namespaced store: ExternalSecrets and PushSecrets in its
// namespace reach the backend through it.
// +kubebuilder:object:root=true
type SecretStore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec SecretStoreSpec `json:"spec,omitempty"`
	// Status is the observed state, written by ESO.
	Status SecretStoreStatus `json:"status,omitempty"`
}

// SecretStoreList is a list of [SecretStore].
// +kubebuilder:object:root=true
type SecretStoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the SecretStores.
	Items []SecretStore `json:"items"`
}

// ClusterSecretStore is a cluster-scoped store that ExternalSecrets and PushSecrets
// in any namespace it admits can use.
// +kubebuilder:object:root=true
type ClusterSecretStore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec SecretStoreSpec `json:"spec,omitempty"`
	// Status is the observed state, written by ESO.
	Status SecretStoreStatus `json:"status,omitempty"`
}

// ClusterSecretStoreList is a list of [ClusterSecretStore].
// +kubebuilder:object:root=true
type ClusterSecretStoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ClusterSecretStores.
	Items []ClusterSecretStore `json:"items"`
}
