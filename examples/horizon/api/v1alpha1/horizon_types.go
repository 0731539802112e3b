package v1alpha1

import (
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
)

// HorizonSpec is the desired state of a Horizon: the OpenStack dashboard's image and
// scale, the Keystone it authenticates against, where its SECRET_KEY comes from, the
// Django settings it runs with and how it is exposed, scaled and fenced.
type HorizonSpec struct {
	// Image is the Horizon container image. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Image string `json:"image"`

	// Replicas is the number of dashboard pods. Defaults to 1; 0 scales the dashboard
	// down. Ignored when autoscaling is set: the HorizontalPodAutoscaler owns the
	// replica count then.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// KeystoneEndpoint is the cluster-local Keystone URL the dashboard authenticates
	// against (OPENSTACK_KEYSTONE_URL), for example
	// http://keystone.openstack.svc:5000/v3. Required; must start with http:// or
	// https:// followed by a host.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^https?://[^/?#]+')",message="must be an http:// or https:// URL with a host"
	KeystoneEndpoint string `json:"keystoneEndpoint"`

	// SecretStoreRef selects the External Secrets Operator store the SECRET_KEY is
	// read through. When omitted, the admission webhook sets it to the shared
	// ClusterSecretStore openbao-cluster-store, so the store in use is visible here.
	// +optional
	SecretStoreRef *commonv1.SecretStoreRefSpec `json:"secretStoreRef,omitempty"`

	// SecretKey locates Django's SECRET_KEY in the secret backend. The operator syncs
	// it with an ExternalSecret into a Secret named <horizon>-secret-key, which the
	// dashboard pods read; the key itself never appears in the resource, the settings
	// ConfigMap or the status. Required.
	SecretKey SecretKeySpec `json:"secretKey"`

	// MemcachedServers are the memcached instances Django caches sessions and data in
	// (CACHES), each "host:port" with a DNS name, an IPv4 address or a bracketed IPv6
	// address and a port from 1 to 65535, for example memcached.openstack.svc:11211.
	// When empty, each pod uses a local-memory cache, so a user's session survives
	// only as long as requests reach the same pod.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=261
	// +kubebuilder:validation:items:Pattern=`^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?):([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])$`
	// +listType=atomic
	// +optional
	MemcachedServers []string `json:"memcachedServers,omitempty"`

	// Debug turns on Django's DEBUG mode, which shows tracebacks to users. Defaults to
	// false; never turn it on in production.
	// +optional
	Debug bool `json:"debug,omitempty"`

	// TimeZone is the dashboard's TIME_ZONE, an IANA time zone name such as
	// Europe/Berlin. Defaults to UTC.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:default=UTC
	// +optional
	TimeZone string `json:"timeZone,omitempty"`

	// WebSSO configures federated single sign-on through Keystone. When omitted,
	// users log in with Keystone credentials only.
	// +optional
	WebSSO *WebSSOSpec `json:"websso,omitempty"`

	// MultiDomain configures logging in to Keystone domains other than the default.
	// When omitted, every user logs in to the Keystone domain "Default".
	// +optional
	MultiDomain *MultiDomainSpec `json:"multiDomain,omitempty"`

	// ExtraConfig holds further Django settings: each key is a setting name (a Python
	// identifier such as SESSION_TIMEOUT) and each value a Python literal written
	// verbatim into the settings file (3600, 'text', True, ['a', 'b']). They are
	// merged last, so they override the settings the operator derives from the other
	// fields. SECRET_KEY is refused: it comes from secretKey, through the secret
	// backend, never from the resource. A setting that websso or multiDomain sets
	// (WEBSSO_CHOICES, for example) is refused by the admission webhook, which names
	// both fields: set it in one place. When empty, no further settings are written.
	// +kubebuilder:validation:MaxProperties=128
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Za-z_][A-Za-z0-9_]*$'))",message="keys must be Python identifiers (^[A-Za-z_][A-Za-z0-9_]*$)"
	// +kubebuilder:validation:XValidation:rule="!('SECRET_KEY' in self)",message="must not set SECRET_KEY: it comes from spec.secretKey"
	// +optional
	ExtraConfig map[string]string `json:"extraConfig,omitempty"`

	// Gateway exposes the dashboard through a Gateway API HTTPRoute attached to a
	// Gateway, and makes the dashboard trust the X-Forwarded-Proto header the Gateway
	// sets, so that it knows a request arrived over HTTPS. When omitted, no HTTPRoute
	// is created and the dashboard is reachable only through its Service.
	// +optional
	Gateway *GatewaySpec `json:"gateway,omitempty"`

	// Autoscaling runs the dashboard under a HorizontalPodAutoscaler that scales on
	// CPU utilisation; replicas is ignored then. When omitted, replicas is the fixed
	// pod count.
	// +optional
	Autoscaling *commonv1.AutoscalingSpec `json:"autoscaling,omitempty"`

	// VPA attaches a VerticalPodAutoscaler to the dashboard's Deployment. When
	// omitted, no VerticalPodAutoscaler is created. Together with autoscaling, keep
	// updateMode Off: both autoscalers would otherwise act on CPU.
	// +optional
	VPA *VPASpec `json:"vpa,omitempty"`

	// NetworkPolicy restricts the traffic that reaches the dashboard pods to the
	// listed ingress rules. When omitted, no NetworkPolicy is created and the
	// namespace's own policies apply.
	// +optional
	NetworkPolicy *NetworkPolicySpec `json:"networkPolicy,omitempty"`

	// TargetClusterRef names the registered cluster the dashboard's workload is
	// written to. When omitted, it runs on the management cluster.
	// +optional
	TargetClusterRef *commonv1.TargetClusterRefSpec `json:"targetClusterRef,omitempty"`
}

// SecretKeySpec locates Django's SECRET_KEY in the secret backend.
type SecretKeySpec struct {
	// RemoteKey is the path of the SECRET_KEY in the secret backend, for example
	// openstack/horizon/secret-key. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	RemoteKey string `json:"remoteKey"`

	// Property is the field at remoteKey that holds the key. Defaults to secret_key.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:default=secret_key
	// +optional
	Property string `json:"property,omitempty"`

	// RefreshInterval is how often the ExternalSecret re-reads the key from the
	// backend, as a Go duration such as 30m or 1h. Defaults to 1h; 0 reads it once.
	// +kubebuilder:default="1h"
	// +optional
	RefreshInterval *metav1.Duration `json:"refreshInterval,omitempty"`
}

// WebSSOSpec configures federated single sign-on (WEBSSO_*): the login page offers the
// choices, and a choice that is mapped to an identity provider sends the user there
// through Keystone.
// +kubebuilder:validation:XValidation:rule="!(has(self.enabled) && self.enabled) || (has(self.choices) && size(self.choices) > 0)",message="must list at least one choice when websso is enabled",fieldPath=".choices"
// +kubebuilder:validation:XValidation:rule="!has(self.initialChoice) || size(self.initialChoice) == 0 || (has(self.choices) && self.choices.exists(c, c.id == self.initialChoice))",messageExpression="'\"' + self.initialChoice + '\" is not the id of any of the choices'",fieldPath=".initialChoice"
// +kubebuilder:validation:XValidation:rule="!has(self.idpMapping) || self.idpMapping.all(k, has(self.choices) && self.choices.exists(c, c.id == k))",message="every key must be the id of one of the choices",fieldPath=".idpMapping"
type WebSSOSpec struct {
	// Enabled turns single sign-on on (WEBSSO_ENABLED). Defaults to false, which
	// keeps the rest of this block in the resource but out of effect. When true,
	// choices must not be empty.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// Choices are the login methods the login page offers, in order
	// (WEBSSO_CHOICES). List "credentials" to keep the Keystone password login.
	// Each id appears once.
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=id
	// +optional
	Choices []WebSSOChoice `json:"choices,omitempty"`

	// InitialChoice is the id of the choice the login page preselects
	// (WEBSSO_INITIAL_CHOICE). When set, it must be one of the choices' ids. When
	// empty and single sign-on is enabled, the admission webhook sets it to the first
	// choice's id.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	InitialChoice string `json:"initialChoice,omitempty"`

	// IDPMapping maps a choice's id to the Keystone identity provider and federation
	// protocol it logs in through (WEBSSO_IDP_MAPPING). Every key must be one of the
	// choices' ids. A choice without a mapping logs in through the Keystone protocol
	// named by its id. When empty, no choice is mapped.
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	IDPMapping map[string]IDPMapping `json:"idpMapping,omitempty"`

	// KeystoneURL is the Keystone URL the user's browser is redirected to for single
	// sign-on (WEBSSO_KEYSTONE_URL), usually Keystone's public endpoint, which the
	// cluster-local keystoneEndpoint is not. When empty, keystoneEndpoint is used.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^https?://[^/?#]+')",message="must be an http:// or https:// URL with a host"
	// +optional
	KeystoneURL string `json:"keystoneURL,omitempty"`

	// IdentityBackends name KeystoneIdentityBackends in the Horizon's own namespace
	// (never another one) whose identity providers the login page offers. Every
	// provider of a backend's spec.federation that its status.identityProviders
	// reports registered with the declared protocol becomes a choice with the id
	// <provider id>_<protocol> (corp_openid, for example) and the provider's
	// description as label (its id when the description is empty), mapped to the
	// provider and protocol in WEBSSO_IDP_MAPPING. These choices follow the
	// hand-written choices, in the order of this list and then of each backend's
	// providers. A hand-written choice with the same id wins: the provider's choice is
	// left out and WebSSOReady reports WebSSOChoiceConflict. A backend that is missing,
	// declares no federation or has not registered a provider yet contributes only
	// what is registered, and WebSSOReady reports WaitingForIdentityBackend naming it;
	// the settings render with the other choices, and roll once more when the
	// provider is registered. Choices must still list at least one choice
	// (credentials, usually), the login method offered while no provider is
	// registered, and initialChoice names one of them. Each name appears once. When
	// empty, the login page offers the hand-written choices only.
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=name
	// +optional
	IdentityBackends []IdentityBackendRef `json:"identityBackends,omitempty"`
}

// IdentityBackendRef names a KeystoneIdentityBackend in the Horizon's own namespace.
type IdentityBackendRef struct {
	// Name of the KeystoneIdentityBackend, a DNS subdomain name. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// WebSSOChoice is one login method offered on the login page.
type WebSSOChoice struct {
	// ID identifies the choice: lower-case letters, digits and underscores, for
	// example credentials or oidc. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9_]+$`
	ID string `json:"id"`

	// Label is the text the login page shows for the choice. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Label string `json:"label"`
}

// IDPMapping is the Keystone identity provider and federation protocol a single
// sign-on choice logs in through.
type IDPMapping struct {
	// IDP is the name of the identity provider registered in Keystone. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	IDP string `json:"idp"`

	// Protocol is the Keystone federation protocol, for example openid or saml2.
	// Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Protocol string `json:"protocol"`
}

// MultiDomainSpec configures logging in to more than one Keystone domain.
// +kubebuilder:validation:XValidation:rule="!(has(self.dropdown) && self.dropdown) || (has(self.domains) && size(self.domains) > 0)",message="must list at least one domain when dropdown is true",fieldPath=".domains"
type MultiDomainSpec struct {
	// Enabled adds a domain field to the login form
	// (OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT). Defaults to false, which keeps the
	// rest of this block out of effect.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// DefaultDomain is the Keystone domain used when the user names none
	// (OPENSTACK_KEYSTONE_DEFAULT_DOMAIN). Defaults to Default.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:default=Default
	// +optional
	DefaultDomain string `json:"defaultDomain,omitempty"`

	// Dropdown replaces the free-text domain field with a list of domains
	// (OPENSTACK_KEYSTONE_DOMAIN_DROPDOWN). Defaults to false. When true, domains
	// must not be empty.
	// +optional
	Dropdown bool `json:"dropdown,omitempty"`

	// Domains are the entries of the domain list, in order
	// (OPENSTACK_KEYSTONE_DOMAIN_CHOICES). Each id appears once. Used only when
	// dropdown is true.
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=id
	// +optional
	Domains []DomainChoice `json:"domains,omitempty"`
}

// DomainChoice is one entry of the login form's domain list.
type DomainChoice struct {
	// ID is the name of the Keystone domain the user logs in to. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	ID string `json:"id"`

	// Label is the text the list shows for the domain. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Label string `json:"label"`
}

// GatewaySpec exposes the dashboard through a Gateway API HTTPRoute.
type GatewaySpec struct {
	// ParentRef is the Gateway (and optionally its listener) the HTTPRoute attaches
	// to. Required.
	ParentRef GatewayParentRef `json:"parentRef"`

	// Hostname is the host name the HTTPRoute matches and users reach the dashboard
	// at, for example dashboard.example.com. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Hostname string `json:"hostname"`

	// Path is the path prefix the HTTPRoute matches. Defaults to /.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	// +kubebuilder:default="/"
	// +optional
	Path string `json:"path,omitempty"`
}

// GatewayParentRef names the Gateway an HTTPRoute attaches to.
type GatewayParentRef struct {
	// Name of the Gateway. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the Gateway. When empty, the admission webhook sets it to the
	// Horizon's own namespace.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// SectionName is the Gateway listener the HTTPRoute attaches to. When empty,
	// the HTTPRoute attaches to every listener that admits it.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	SectionName string `json:"sectionName,omitempty"`
}

// VPAUpdateMode is how a VerticalPodAutoscaler applies its recommendations.
// +kubebuilder:validation:Enum=Off;Initial;Recreate;InPlaceOrRecreate
type VPAUpdateMode string

const (
	// VPAUpdateModeOff only records recommendations; pods keep their requests.
	VPAUpdateModeOff VPAUpdateMode = "Off"
	// VPAUpdateModeInitial sets requests when a pod is created and never changes
	// them on a running pod.
	VPAUpdateModeInitial VPAUpdateMode = "Initial"
	// VPAUpdateModeRecreate evicts pods whose requests differ from the
	// recommendation, so they are recreated with it.
	VPAUpdateModeRecreate VPAUpdateMode = "Recreate"
	// VPAUpdateModeInPlaceOrRecreate resizes running pods in place where the node
	// allows it and evicts them otherwise.
	VPAUpdateModeInPlaceOrRecreate VPAUpdateMode = "InPlaceOrRecreate"
)

// VPASpec attaches a VerticalPodAutoscaler to the dashboard's Deployment.
type VPASpec struct {
	// Enabled creates the VerticalPodAutoscaler. Defaults to false, which creates
	// none.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// UpdateMode is how the VerticalPodAutoscaler applies its recommendations: Off,
	// Initial, Recreate or InPlaceOrRecreate. Defaults to Off, which only records
	// them.
	// +kubebuilder:default=Off
	// +optional
	UpdateMode VPAUpdateMode `json:"updateMode,omitempty"`
}

// NetworkPolicySpec restricts the traffic that reaches the dashboard pods.
type NetworkPolicySpec struct {
	// Ingress lists the traffic allowed to reach the dashboard pods, as the ingress
	// rules of a NetworkPolicy that selects them; everything else is refused.
	// Required, with at least one rule: an empty list would block all traffic, so it
	// is refused at admission instead of taking the dashboard off the network.
	// +kubebuilder:validation:MinItems=1
	// +listType=atomic
	Ingress []networkingv1.NetworkPolicyIngressRule `json:"ingress"`
}

// HorizonStatus is the observed state of a Horizon.
type HorizonStatus struct {
	// ObservedGeneration is the metadata.generation the last reconcile pass acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions report the state of the dashboard and its children; the controller
	// defines the types, among them the aggregate Ready.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// Endpoint is the in-cluster URL of the dashboard's Service, for example
	// http://horizon.openstack.svc:8080/.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// ConfigMap is the name of the immutable ConfigMap holding the current Django
	// settings.
	// +optional
	ConfigMap string `json:"configMap,omitempty"`
}

// Horizon runs the OpenStack dashboard: a Deployment of Django pods configured from an
// immutable settings ConfigMap and a SECRET_KEY synced from the secret backend, a
// Service in front of them and, where its fields ask for them, an HTTPRoute,
// autoscalers and a NetworkPolicy.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=horizons,scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoint`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Horizon struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The desired state, set by the user.
	Spec HorizonSpec `json:"spec"`

	// The observed state, written by the operator.
	// +optional
	Status HorizonStatus `json:"status,omitempty"`
}

// Conditions returns the status' condition list, which makes *Horizon a
// reconcile.Object.
func (h *Horizon) Conditions() *[]metav1.Condition { return &h.Status.Conditions }

// HorizonList is a list of Horizons.
//
// +kubebuilder:object:root=true
type HorizonList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Horizons.
	Items []Horizon `json:"items"`
}
