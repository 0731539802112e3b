package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KeystoneIdentityBackendSpec is the desired state of a KeystoneIdentityBackend: a
// Keystone domain whose users and groups come from a domain-specific identity driver.
type KeystoneIdentityBackendSpec struct {
	// KeystoneRef names the Keystone, in the same namespace, the backend belongs to.
	// Required.
	KeystoneRef LocalObjectReference `json:"keystoneRef"`

	// Domain is the name of the Keystone domain; the controller creates it, or adopts
	// one of that name. It also names the domain's configuration file
	// (keystone.<domain>.conf). Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9_.-]*$`
	Domain string `json:"domain"`

	// Description of the domain.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`

	// Driver is the identity driver of the domain. Defaults to ldap.
	// +kubebuilder:validation:Enum=ldap;sql
	// +kubebuilder:default=ldap
	// +optional
	Driver string `json:"driver,omitempty"`

	// Config holds the options of the domain's configuration file: section name (for
	// example ldap) to option name (url, user, suffix, ...) to value. The password
	// comes from passwordSecretRef, never from here.
	// +kubebuilder:validation:MaxProperties=16
	// +optional
	Config map[string]map[string]string `json:"config,omitempty"`

	// PasswordSecretRef is the Secret key holding the driver's bind password
	// ([ldap] password). When omitted, the driver binds anonymously.
	// +optional
	PasswordSecretRef *SecretKeyRef `json:"passwordSecretRef,omitempty"`
}

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	// Name of the object. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// SecretKeyRef names a key of a Secret in the same namespace.
type SecretKeyRef struct {
	// Name of the Secret. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Key in the Secret's data. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// KeystoneIdentityBackendStatus is the observed state of a KeystoneIdentityBackend.
type KeystoneIdentityBackendStatus struct {
	// ObservedGeneration is the metadata.generation the last reconcile pass acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions report the handshake with the Keystone: DomainReady (the domain
	// exists in Keystone), ConfigProjected (the Keystone's pods run with the domain's
	// configuration) and the aggregate Ready.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// DomainID is the ID Keystone gave the domain.
	// +optional
	DomainID string `json:"domainID,omitempty"`
}

// KeystoneIdentityBackend adds a domain to a Keystone whose users come from its own
// identity driver (LDAP): a satellite of the Keystone, projected into the Keystone's
// domain configuration Secret and mounted by its pods.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=keystoneidentitybackends,scope=Namespaced,shortName=kib
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Keystone",type=string,JSONPath=`.spec.keystoneRef.name`
// +kubebuilder:printcolumn:name="Domain",type=string,JSONPath=`.spec.domain`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KeystoneIdentityBackend struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The desired state, set by the user.
	Spec KeystoneIdentityBackendSpec `json:"spec"`

	// The observed state, written by the operator.
	// +optional
	Status KeystoneIdentityBackendStatus `json:"status,omitempty"`
}

// Conditions returns the status' condition list, which makes *KeystoneIdentityBackend
// a reconcile.Object.
func (b *KeystoneIdentityBackend) Conditions() *[]metav1.Condition { return &b.Status.Conditions }

// KeystoneIdentityBackendList is a list of KeystoneIdentityBackends.
//
// +kubebuilder:object:root=true
type KeystoneIdentityBackendList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the KeystoneIdentityBackends.
	Items []KeystoneIdentityBackend `json:"items"`
}
