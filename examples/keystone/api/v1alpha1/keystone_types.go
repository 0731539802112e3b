package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/httproute"
)

// KeystoneSpec is the desired state of a Keystone: the identity service's image and
// scale, its database, its key repositories, the bootstrap of its admin account, its
// policy and settings, and how it is exposed and scaled.
// +kubebuilder:validation:XValidation:rule="!has(self.externalEndpoint) || has(self.targetClusterRef)",message="is used only with targetClusterRef: a Keystone on this cluster is reached at its own Service",fieldPath=".externalEndpoint"
type KeystoneSpec struct {
	// Image is the Keystone container image; it also runs the database migrations
	// (db-sync, once per image), the policy validation, the bootstrap and the cron jobs.
	// Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Image string `json:"image"`

	// Replicas is the number of API pods. Defaults to 1. Ignored when autoscaling is
	// set: the HorizontalPodAutoscaler owns the replica count then.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// SecretStoreRef selects the External Secrets Operator store the admin password is
	// read through and the key repositories and database password are backed up to.
	// When omitted, the shared ClusterSecretStore openbao-cluster-store.
	// +optional
	SecretStoreRef *commonv1.SecretStoreRefSpec `json:"secretStoreRef,omitempty"`

	// Database is the MariaDB database Keystone keeps its data in. Required.
	Database DatabaseSpec `json:"database"`

	// Bootstrap creates the admin account, the admin project and the identity
	// endpoints (keystone-manage bootstrap). Required.
	Bootstrap BootstrapSpec `json:"bootstrap"`

	// Fernet configures the fernet key repository that signs tokens.
	// +kubebuilder:default={}
	// +optional
	Fernet KeyRepositorySpec `json:"fernet,omitempty"`

	// Credential configures the credential key repository that encrypts the
	// credentials users store in Keystone.
	// +kubebuilder:default={}
	// +optional
	Credential KeyRepositorySpec `json:"credential,omitempty"`

	// Token configures the lifetime of tokens; together with the fernet rotation it
	// decides how many keys must stay active.
	// +kubebuilder:default={}
	// +optional
	Token TokenSpec `json:"token,omitempty"`

	// Policy overrides rules of Keystone's default policy. The overrides are validated
	// before a Deployment uses them.
	// +optional
	Policy *PolicySpec `json:"policy,omitempty"`

	// MemcachedServers are the memcached instances Keystone caches in, each
	// "host:port". When empty, caching is off.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=261
	// +listType=atomic
	// +optional
	MemcachedServers []string `json:"memcachedServers,omitempty"`

	// Debug turns on debug logging.
	// +optional
	Debug bool `json:"debug,omitempty"`

	// ExtraConfig is merged last into keystone.conf: section name to option name to
	// value. It overrides what the operator renders, so use it with care.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	ExtraConfig map[string]map[string]string `json:"extraConfig,omitempty"`

	// Gateway exposes the public API through a Gateway API HTTPRoute. When omitted, no
	// route is made.
	// +optional
	Gateway *httproute.Spec `json:"gateway,omitempty"`

	// Autoscaling runs a HorizontalPodAutoscaler for the API pods. When omitted,
	// replicas is the pod count.
	// +optional
	Autoscaling *commonv1.AutoscalingSpec `json:"autoscaling,omitempty"`

	// TrustFlush runs keystone-manage trust_flush on a schedule, deleting expired and
	// soft-deleted trusts.
	// +kubebuilder:default={}
	// +optional
	TrustFlush CronSpec `json:"trustFlush,omitempty"`

	// PasswordRotation rotates the database password on a schedule, without ever
	// leaving the API without a password the database accepts.
	// +kubebuilder:default={}
	// +optional
	PasswordRotation CronSpec `json:"passwordRotation,omitempty"`

	// TargetClusterRef names the cluster Keystone runs on; when omitted, the cluster of
	// this resource.
	// +optional
	TargetClusterRef *commonv1.TargetClusterRefSpec `json:"targetClusterRef,omitempty"`

	// ExternalEndpoint is the https URL at which the operator reaches the Keystone API
	// when targetClusterRef puts Keystone on another cluster, for example the address a
	// route of that cluster exposes it at (a trailing /v3 is accepted). The
	// KeystoneIdentityBackends of such a Keystone create their domains through it, as
	// the admin user with the admin password, so it must be https, and it must be an
	// address that reaches this Keystone. Without it they are refused (DomainReady
	// False, reason ExternalEndpointRequired): the Service URL of status.endpoint
	// resolves on the operator's own cluster, where a Service of that name is not this
	// Keystone. Allowed only with targetClusterRef; a Keystone on this cluster is always
	// reached at its own Service.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^https://[^/?#@]+(/[^?#]*)?$')",message="must be an https:// URL with a host and without user information, query or fragment"
	// +optional
	ExternalEndpoint string `json:"externalEndpoint,omitempty"`
}

// DatabaseSpec names the MariaDB server and the database, account and TLS of
// Keystone's connection. The operator creates the Database, User and Grant through
// mariadb-operator, with a generated password.
type DatabaseSpec struct {
	// MariaDBRef is the mariadb-operator MariaDB server. Required.
	MariaDBRef MariaDBRef `json:"mariaDBRef"`

	// Name of the logical database. Defaults to keystone.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_]+$`
	// +kubebuilder:default=keystone
	// +optional
	Name string `json:"name,omitempty"`

	// Username of the database account. Defaults to keystone.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=80
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_]+$`
	// +kubebuilder:default=keystone
	// +optional
	Username string `json:"username,omitempty"`

	// TLS encrypts the connection with a client certificate issued by cert-manager.
	// When omitted, the connection is not encrypted.
	// +optional
	TLS *DatabaseTLSSpec `json:"tls,omitempty"`
}

// MariaDBRef names a mariadb-operator MariaDB.
type MariaDBRef struct {
	// Name of the MariaDB. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the MariaDB; defaults to the Keystone's namespace.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// DatabaseTLSSpec selects the cert-manager issuer of the database client certificate.
type DatabaseTLSSpec struct {
	// IssuerRef is the cert-manager Issuer or ClusterIssuer. Required.
	IssuerRef IssuerRef `json:"issuerRef"`
}

// IssuerRef names a cert-manager issuer.
type IssuerRef struct {
	// Name of the issuer. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Kind is Issuer (in the Keystone's namespace) or ClusterIssuer. Defaults to Issuer.
	// +kubebuilder:validation:Enum=Issuer;ClusterIssuer
	// +kubebuilder:default=Issuer
	// +optional
	Kind string `json:"kind,omitempty"`
}

// BootstrapSpec is what keystone-manage bootstrap creates.
type BootstrapSpec struct {
	// AdminUser is the name of the admin account. Defaults to admin.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:default=admin
	// +optional
	AdminUser string `json:"adminUser,omitempty"`

	// AdminPassword locates the admin password in the secret backend; the operator
	// syncs it with an ExternalSecret into the Secret <keystone>-admin-password. A
	// changed password re-runs the bootstrap. Required.
	AdminPassword RemoteKeySpec `json:"adminPassword"`

	// Region of the identity endpoints. Defaults to RegionOne.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:default=RegionOne
	// +optional
	Region string `json:"region,omitempty"`

	// PublicURL is the public identity endpoint, for example
	// https://identity.example.com. Defaults to the cluster-local Service URL.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self == '' || self.matches('^https?://[^/?#]+')",message="must be an http:// or https:// URL with a host"
	// +optional
	PublicURL string `json:"publicURL,omitempty"`
}

// RemoteKeySpec locates one value in the secret backend.
type RemoteKeySpec struct {
	// RemoteKey is the key of the secret in the backend (for OpenBao, its path).
	// Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	RemoteKey string `json:"remoteKey"`

	// Property selects one property of a structured value. Defaults to password.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:default=password
	// +optional
	Property string `json:"property,omitempty"`
}

// KeyRepositorySpec configures a key repository (fernet or credential): how many keys
// stay active and how often they rotate. Keys are generated once, backed up to the
// secret backend and never regenerated while a backup may restore them. A CronJob runs
// the rotation; it rotates at most once per rotationInterval, whatever its schedule.
type KeyRepositorySpec struct {
	// MaxActiveKeys is the number of keys kept: the staged key, the primary and the
	// secondaries that still decrypt older tokens. Defaults to 3, the minimum. The
	// controller refuses a value that would drop a key a valid token still needs:
	// token expiration plus allow-expired window must not exceed
	// (maxActiveKeys - 2) × rotationInterval.
	// +kubebuilder:validation:Minimum=3
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=3
	// +optional
	MaxActiveKeys int32 `json:"maxActiveKeys,omitempty"`

	// RotationInterval is the time between two rotations. Defaults to 168h (a week).
	// +kubebuilder:default="168h"
	// +optional
	RotationInterval *metav1.Duration `json:"rotationInterval,omitempty"`
}

// TokenSpec configures the lifetime of tokens.
type TokenSpec struct {
	// Expiration is how long a token is valid. Defaults to 1h.
	// +kubebuilder:default="1h"
	// +optional
	Expiration *metav1.Duration `json:"expiration,omitempty"`

	// AllowExpiredWindow is how long after its expiration a token may still be
	// fetched with allow_expired (services finishing long operations). Defaults to
	// 48h.
	// +kubebuilder:default="48h"
	// +optional
	AllowExpiredWindow *metav1.Duration `json:"allowExpiredWindow,omitempty"`
}

// PolicySpec names the ConfigMap that holds policy overrides.
type PolicySpec struct {
	// ConfigMapRef is the ConfigMap in the Keystone's namespace. Required.
	ConfigMapRef ConfigMapKeyRef `json:"configMapRef"`
}

// ConfigMapKeyRef names a key of a ConfigMap in the same namespace.
type ConfigMapKeyRef struct {
	// Name of the ConfigMap. Required.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Key holding the overrides (YAML). Defaults to policy.yaml.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:default="policy.yaml"
	// +optional
	Key string `json:"key,omitempty"`
}

// CronSpec configures a CronJob the operator runs.
type CronSpec struct {
	// Schedule is the cron schedule. When empty, the operator's default for the job.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Schedule string `json:"schedule,omitempty"`

	// Suspend stops the CronJob from starting new runs.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// KeystoneStatus is the observed state of a Keystone.
type KeystoneStatus struct {
	// ObservedGeneration is the metadata.generation the last reconcile pass acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions report the state of the service and its children; the controller
	// defines the types, among them the aggregate Ready.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// Endpoint is the in-cluster URL of the API's Service, for example
	// http://keystone.openstack.svc:5000, set once the Deployment is available. The
	// KeystoneIdentityBackends read it only as the sign that the API runs, never as an
	// address: they send the admin password to the Service URL computed from the
	// Keystone's name and namespace, or to spec.externalEndpoint.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// ConfigMap is the name of the immutable ConfigMap holding the current
	// keystone.conf (the database connection, which carries the password, reaches the
	// pods through an environment variable from a Secret, never through this file).
	// +optional
	ConfigMap string `json:"configMap,omitempty"`

	// SyncedImage is the image whose database migrations completed; db-sync runs
	// again only for another image.
	// +optional
	SyncedImage string `json:"syncedImage,omitempty"`
}

// Keystone runs the OpenStack identity service: a Deployment of API pods configured
// from an immutable keystone.conf, its MariaDB database, fernet and credential key
// repositories rotated by CronJobs, the bootstrap of its admin account and, where its
// fields ask for them, an HTTPRoute and an autoscaler. KeystoneIdentityBackends add
// domains with their own identity drivers.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=keystones,scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoint`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Keystone struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The desired state, set by the user.
	Spec KeystoneSpec `json:"spec"`

	// The observed state, written by the operator.
	// +optional
	Status KeystoneStatus `json:"status,omitempty"`
}

// Conditions returns the status' condition list, which makes *Keystone a
// reconcile.Object.
func (k *Keystone) Conditions() *[]metav1.Condition { return &k.Status.Conditions }

// KeystoneList is a list of Keystones.
//
// +kubebuilder:object:root=true
type KeystoneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Keystones.
	Items []Keystone `json:"items"`
}
