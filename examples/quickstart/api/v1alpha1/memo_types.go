package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MemoSpec is the desired state of a Memo: what the memo server says and how it runs.
type MemoSpec struct {
	// Message is the text the memo server serves; the [memo] message option.
	// +kubebuilder:validation:MinLength=1
	Message string `json:"message"`
	// LogLevel is the [DEFAULT] log_level option.
	// +kubebuilder:validation:Enum=debug;info;warning;error
	// +kubebuilder:default=info
	// +optional
	LogLevel string `json:"logLevel,omitempty"`
	// Port is the port the memo server listens on and the Service exposes; the
	// [memo] port option.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=8080
	// +optional
	Port int32 `json:"port,omitempty"`
	// Replicas is the number of memo server pods.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Image is the memo server's container image.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:default="registry.k8s.io/pause:3.10"
	// +optional
	Image string `json:"image,omitempty"`
}

// MemoStatus is the observed state of a Memo.
type MemoStatus struct {
	// Conditions are ConfigReady, DeploymentReady, ServiceReady and the aggregate Ready.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the metadata.generation the last reconcile pass acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// ConfigMap is the name of the immutable ConfigMap holding the rendered INI file.
	// +optional
	ConfigMap string `json:"configMap,omitempty"`
}

// Memo serves a message rendered into an INI file: a ConfigMap, a Deployment that
// mounts it and a Service in front of it.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=memos
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="ConfigMap",type=string,JSONPath=`.status.configMap`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Memo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The desired state, set by the user.
	Spec MemoSpec `json:"spec"`
	// The observed state, written by the operator.
	// +optional
	Status MemoStatus `json:"status,omitempty"`
}

// Conditions returns the status' condition list, which makes *Memo a reconcile.Object.
func (m *Memo) Conditions() *[]metav1.Condition { return &m.Status.Conditions }

// MemoList is a list of Memos.
//
// +kubebuilder:object:root=true
type MemoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Memos.
	Items []Memo `json:"items"`
}
