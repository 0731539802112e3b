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

	// Federation declares the identity providers whose users sign in to this domain:
	// Keystone gives an identity provider one domain (its domain_id), and the
	// federated users it maps land in it, so the providers live on the backend of
	// that domain and pass its DomainReady gate with it. A nil federation projects
	// nothing: the Keystone gets no federation Secret for this backend.
	// +optional
	Federation *FederationSpec `json:"federation,omitempty"`
}

// FederationSpec is the federation of one backend's domain: its identity providers and
// the dashboards allowed to receive single-sign-on tokens.
type FederationSpec struct {
	// IdentityProviders are the domain's identity providers, at least one, each with
	// an id unique in the list.
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	IdentityProviders []IdentityProviderSpec `json:"identityProviders"`

	// TrustedDashboards are the WebSSO URLs of the dashboards (for example
	// https://dashboard.example.com/auth/websso/) Keystone may post a token to after a
	// federated sign-in: keystone.conf [federation] trusted_dashboard. The Keystone
	// trusts the union of its backends' lists.
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=2048
	// +kubebuilder:validation:items:XValidation:rule="self.matches('^https://[^/?#@]+(/[^?#]*)?$')",message="must be an https:// URL with a host and without user information, query or fragment"
	// +optional
	TrustedDashboards []string `json:"trustedDashboards,omitempty"`
}

// The federation protocols of an identity provider.
const (
	// ProtocolOpenID is OpenID Connect: Keystone's openid auth method, behind the
	// web server's OpenID Connect relying party.
	ProtocolOpenID = "openid"
	// ProtocolSAML2 is SAML 2.0: Keystone's saml2 auth method, behind the web
	// server's SAML service provider.
	ProtocolSAML2 = "saml2"
)

// IdentityProviderSpec is one identity provider of a domain: its Keystone id, the
// remote ids its assertions carry, the protocol it speaks with the settings of that
// protocol, and the mapping rules that turn its assertions into Keystone users and
// groups. Exactly the block of its protocol is set.
//
// +kubebuilder:validation:XValidation:rule="self.protocol != 'openid' || has(self.openid)",message="is required when protocol is openid",fieldPath=".openid"
// +kubebuilder:validation:XValidation:rule="self.protocol != 'saml2' || has(self.saml2)",message="is required when protocol is saml2",fieldPath=".saml2"
// +kubebuilder:validation:XValidation:rule="self.protocol == 'openid' || !has(self.openid)",message="is set, but protocol is not openid",fieldPath=".openid"
// +kubebuilder:validation:XValidation:rule="self.protocol == 'saml2' || !has(self.saml2)",message="is set, but protocol is not saml2",fieldPath=".saml2"
type IdentityProviderSpec struct {
	// ID is the identity provider's id in Keystone, the {idp} of the
	// /v3/OS-FEDERATION/identity_providers/{idp} URLs; it also names the provider's
	// files in the federation Secret. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9_.-]*$`
	ID string `json:"id"`

	// Description of the identity provider.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`

	// RemoteIDs are the values of the remote id attribute the provider's assertions
	// carry (the OpenID Connect issuer, the SAML IdP entity id); Keystone takes an
	// assertion whose value is among them as this provider's. A remote id belongs to
	// one identity provider of a Keystone.
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=255
	// +optional
	RemoteIDs []string `json:"remoteIDs,omitempty"`

	// Protocol is the federation protocol: openid (OpenID Connect) or saml2.
	// Required.
	// +kubebuilder:validation:Enum=openid;saml2
	Protocol string `json:"protocol"`

	// Mapping is the provider's mapping: the rules Keystone applies, in order, to an
	// assertion, each matching remote attributes and naming the local user, groups
	// and projects. At least one rule.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Mapping []MappingRule `json:"mapping"`

	// OpenID holds the OpenID Connect settings; set exactly when protocol is openid.
	// +optional
	OpenID *OpenIDSpec `json:"openid,omitempty"`

	// SAML2 holds the SAML 2.0 settings; set exactly when protocol is saml2.
	// +optional
	SAML2 *SAML2Spec `json:"saml2,omitempty"`
}

// OpenIDSpec is the OpenID Connect relying party of one identity provider: where its
// discovery document is, and the client Keystone's web server signs in as. Exactly one
// of metadataURL and issuer is set.
//
// +kubebuilder:validation:XValidation:rule="has(self.metadataURL) != has(self.issuer)",message="set exactly one of metadataURL and issuer"
type OpenIDSpec struct {
	// MetadataURL is the URL of the provider's discovery document
	// (.../.well-known/openid-configuration).
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^https://[^/?#@]+(/[^?#]*)?$')",message="must be an https:// URL with a host and without user information, query or fragment"
	// +optional
	MetadataURL string `json:"metadataURL,omitempty"`

	// Issuer is the provider's issuer URL; the discovery document is read from
	// <issuer>/.well-known/openid-configuration.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^https://[^/?#@]+(/[^?#]*)?$')",message="must be an https:// URL with a host and without user information, query or fragment"
	// +optional
	Issuer string `json:"issuer,omitempty"`

	// ClientID is the client id the provider registered for this Keystone. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[!-~]+$`
	ClientID string `json:"clientID"`

	// ClientSecretRef is the Secret key holding the client secret, read like the
	// backend's bind password; the secret is never part of the custom resource.
	// Required.
	ClientSecretRef SecretKeyRef `json:"clientSecretRef"`

	// Scopes are the scopes requested; empty means openid, email and profile.
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Pattern=`^[!#-[\]-~]+$`
	// +optional
	Scopes []string `json:"scopes,omitempty"`
}

// SAML2Spec is the SAML 2.0 service provider of one identity provider: the IdP's
// metadata document and the key pair the service provider signs and decrypts with.
type SAML2Spec struct {
	// IdPMetadata is the identity provider's SAML metadata document (XML). Required.
	IdPMetadata SAMLMetadataSource `json:"idpMetadata"`

	// SPKeyPairSecretRef names the Secret, in the backend's namespace, holding the
	// service provider's certificate and private key under tls.crt and tls.key (a
	// kubernetes.io/tls Secret, as cert-manager writes it). Required.
	SPKeyPairSecretRef LocalObjectReference `json:"spKeyPairSecretRef"`
}

// SAMLMetadataSource is a SAML metadata document, inline or from a ConfigMap key;
// exactly one of the two.
//
// +kubebuilder:validation:XValidation:rule="has(self.inline) != has(self.configMapKeyRef)",message="set exactly one of inline and configMapKeyRef"
type SAMLMetadataSource struct {
	// Inline is the metadata document itself.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=262144
	// +optional
	Inline string `json:"inline,omitempty"`

	// ConfigMapKeyRef names the key of a ConfigMap, in the backend's namespace,
	// holding the metadata document.
	// +optional
	ConfigMapKeyRef *MetadataConfigMapRef `json:"configMapKeyRef,omitempty"`
}

// MetadataConfigMapRef names the key of a ConfigMap, in the same namespace, holding a
// metadata document; unlike ConfigMapKeyRef the key has no default.
type MetadataConfigMapRef struct {
	// Name of the ConfigMap. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Key in the ConfigMap's data. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// MappingRule is one rule of a Keystone mapping, in Keystone's own JSON shape (field
// names included), so rules from Keystone's federation documentation are pasted in
// unchanged: an assertion that matches every entry of remote gets the identities of
// every entry of local. Both lists hold at least one entry.
type MappingRule struct {
	// Local lists what a matching assertion maps to; "{0}", "{1}", ... in its strings
	// stand for the values of the remote entries in order.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Local []MappingLocal `json:"local"`

	// Remote lists the conditions on the assertion's attributes, all of which must
	// hold.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Remote []MappingRemote `json:"remote"`
}

// MappingLocal is one entry of a rule's local list: a user, a group (by id, or by name
// with its domain), groups or group ids from an attribute, a domain, or projects with
// roles. It names at least one of them.
//
// +kubebuilder:validation:MinProperties=1
type MappingLocal struct {
	// User is the user the assertion maps to.
	// +optional
	User *MappedUser `json:"user,omitempty"`

	// Group is a group the user joins.
	// +optional
	Group *MappedGroup `json:"group,omitempty"`

	// Groups is a list of group names, usually "{0}" for a remote attribute holding
	// them; they are looked up in Domain.
	// +kubebuilder:validation:MinLength=1
	// +optional
	Groups string `json:"groups,omitempty"`

	// GroupIDs is a list of group ids, usually "{0}" for a remote attribute holding
	// them.
	// +kubebuilder:validation:MinLength=1
	// +optional
	GroupIDs string `json:"group_ids,omitempty"`

	// Domain is the domain of Groups (and the default for the entry).
	// +optional
	Domain *MappedDomain `json:"domain,omitempty"`

	// Projects are projects created for the user on sign-in, with the roles the user
	// gets on them.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Projects []MappedProject `json:"projects,omitempty"`
}

// MappedUser is the user of a local entry.
//
// +kubebuilder:validation:MinProperties=1
type MappedUser struct {
	// ID of the user.
	// +optional
	ID string `json:"id,omitempty"`

	// Name of the user.
	// +optional
	Name string `json:"name,omitempty"`

	// Email of the user.
	// +optional
	Email string `json:"email,omitempty"`

	// Domain of the user.
	// +optional
	Domain *MappedDomain `json:"domain,omitempty"`

	// Type is ephemeral (a federated user, the default) or local (an existing user
	// of the domain).
	// +kubebuilder:validation:Enum=ephemeral;local
	// +optional
	Type string `json:"type,omitempty"`
}

// MappedGroup is a group of a local entry: by id alone, or by name with its domain.
//
// +kubebuilder:validation:XValidation:rule="has(self.id) != has(self.name)",message="set exactly one of id and name"
// +kubebuilder:validation:XValidation:rule="!has(self.name) || has(self.domain)",message="a group by name needs its domain",fieldPath=".domain"
// +kubebuilder:validation:XValidation:rule="!has(self.id) || !has(self.domain)",message="a group by id takes no domain",fieldPath=".domain"
type MappedGroup struct {
	// ID of the group.
	// +kubebuilder:validation:MinLength=1
	// +optional
	ID string `json:"id,omitempty"`

	// Name of the group.
	// +kubebuilder:validation:MinLength=1
	// +optional
	Name string `json:"name,omitempty"`

	// Domain of a group by name.
	// +optional
	Domain *MappedDomain `json:"domain,omitempty"`
}

// MappedDomain names a domain by id or by name.
//
// +kubebuilder:validation:MinProperties=1
type MappedDomain struct {
	// ID of the domain.
	// +kubebuilder:validation:MinLength=1
	// +optional
	ID string `json:"id,omitempty"`

	// Name of the domain.
	// +kubebuilder:validation:MinLength=1
	// +optional
	Name string `json:"name,omitempty"`
}

// MappedProject is a project of a local entry and the roles the user gets on it.
type MappedProject struct {
	// Name of the project. Required.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Roles the user gets on the project, at least one.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Roles []MappedRole `json:"roles"`
}

// MappedRole names a role.
type MappedRole struct {
	// Name of the role. Required.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// MappingRemote is one condition of a rule's remote list: the attribute type, and at
// most one of any_one_of, not_any_of, blacklist and whitelist; regex only with
// any_one_of or not_any_of. With none of them the attribute only has to be present,
// and its value is the entry's "{n}".
//
// +kubebuilder:validation:XValidation:rule="[has(self.any_one_of), has(self.not_any_of), has(self.blacklist), has(self.whitelist)].filter(x, x).size() <= 1",message="set at most one of any_one_of, not_any_of, blacklist and whitelist"
// +kubebuilder:validation:XValidation:rule="!has(self.regex) || has(self.any_one_of) || has(self.not_any_of)",message="is used only with any_one_of or not_any_of",fieldPath=".regex"
type MappingRemote struct {
	// Type is the name of the assertion attribute (for example OIDC-email,
	// MELLON_groups). Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Type string `json:"type"`

	// AnyOneOf matches when the attribute holds one of these values.
	// +kubebuilder:validation:MinItems=1
	// +optional
	AnyOneOf []string `json:"any_one_of,omitempty"`

	// NotAnyOf matches when the attribute holds none of these values.
	// +kubebuilder:validation:MinItems=1
	// +optional
	NotAnyOf []string `json:"not_any_of,omitempty"`

	// Regex makes the values of any_one_of or not_any_of regular expressions.
	// +optional
	Regex *bool `json:"regex,omitempty"`

	// Blacklist drops these values from the attribute before it is used as "{n}".
	// +kubebuilder:validation:MinItems=1
	// +optional
	Blacklist []string `json:"blacklist,omitempty"`

	// Whitelist keeps only these values of the attribute before it is used as "{n}".
	// +kubebuilder:validation:MinItems=1
	// +optional
	Whitelist []string `json:"whitelist,omitempty"`
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
	// configuration), FederationReady (the identity providers of spec.federation are
	// registered in Keystone) and the aggregate Ready.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// DomainID is the ID Keystone gave the domain.
	// +optional
	DomainID string `json:"domainID,omitempty"`

	// IdentityProviders are the identity providers of spec.federation the controller
	// registered in Keystone, with their mapping and protocol, and which of these
	// objects it created: those, and only those, it deletes when the provider leaves
	// spec.federation or the backend is deleted. Objects it found and adopted stay.
	// +listType=map
	// +listMapKey=id
	// +optional
	IdentityProviders []IdentityProviderStatus `json:"identityProviders,omitempty"`
}

// IdentityProviderStatus is what the controller registered in Keystone for one
// identity provider.
type IdentityProviderStatus struct {
	// ID is the identity provider's id in Keystone.
	ID string `json:"id"`

	// MappingID is the id of the provider's mapping in Keystone.
	// +optional
	MappingID string `json:"mappingID,omitempty"`

	// Protocol is the protocol registered for the provider (openid, saml2).
	// +optional
	Protocol string `json:"protocol,omitempty"`

	// CreatedProvider reports that the controller created the identity provider.
	// +optional
	CreatedProvider bool `json:"createdProvider,omitempty"`

	// CreatedMapping reports that the controller created the mapping.
	// +optional
	CreatedMapping bool `json:"createdMapping,omitempty"`

	// CreatedProtocol reports that the controller created the protocol.
	// +optional
	CreatedProtocol bool `json:"createdProtocol,omitempty"`
}

// KeystoneIdentityBackend adds a domain to a Keystone whose users come from its own
// identity driver (LDAP) and, with spec.federation, from federated identity providers
// (OpenID Connect, SAML 2.0): a satellite of the Keystone, projected into the
// Keystone's domain configuration Secret and its federation Secret. The identity
// providers are part of the backend rather than a kind of their own because Keystone
// binds each provider to one domain, and the backend is what owns the domain.
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
