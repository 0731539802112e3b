package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group and Version of the kinds in this package.
const (
	// Group is the API group of External Secrets Operator.
	Group = "external-secrets.io"
	// Version is the API version of the kinds in this package.
	Version = "v1"
)

// Kind names, as ESO spells them.
const (
	// ExtSecretKind is the kind of [ExternalSecret].
	ExtSecretKind = "ExternalSecret"
	// SecretStoreKind is the kind of [SecretStore].
	SecretStoreKind = "SecretStore"
	// ClusterSecretStoreKind is the kind of [ClusterSecretStore].
	ClusterSecretStoreKind = "ClusterSecretStore"
)

var (
	// SchemeGroupVersion is the group and version the types of this package are
	// registered under.
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}
	// GroupVersion is an alias of [SchemeGroupVersion], in the spelling kubebuilder
	// projects use.
	GroupVersion = SchemeGroupVersion

	// SchemeBuilder registers the types of this package.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds [ExternalSecret], [SecretStore], [ClusterSecretStore] and their
	// List types to a scheme. See the package documentation: ESO's own Go types for
	// the same kinds cannot be in that scheme too.
	AddToScheme = SchemeBuilder.AddToScheme

	// ExtSecretGroupVersionKind is the GroupVersionKind of [ExternalSecret].
	ExtSecretGroupVersionKind = SchemeGroupVersion.WithKind(ExtSecretKind)
	// SecretStoreGroupVersionKind is the GroupVersionKind of [SecretStore].
	SecretStoreGroupVersionKind = SchemeGroupVersion.WithKind(SecretStoreKind)
	// ClusterSecretStoreGroupVersionKind is the GroupVersionKind of [ClusterSecretStore].
	ClusterSecretStoreGroupVersionKind = SchemeGroupVersion.WithKind(ClusterSecretStoreKind)
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion,
		&ExternalSecret{}, &ExternalSecretList{},
		&SecretStore{}, &SecretStoreList{},
		&ClusterSecretStore{}, &ClusterSecretStoreList{},
	)
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}
