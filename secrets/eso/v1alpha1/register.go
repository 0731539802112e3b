package v1alpha1

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
	Version = "v1alpha1"
	// PushSecretKind is the kind of [PushSecret].
	PushSecretKind = "PushSecret"
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
	// AddToScheme adds [PushSecret] and [PushSecretList] to a scheme. See the package
	// documentation: ESO's own Go type for the same kind cannot be in that scheme too.
	AddToScheme = SchemeBuilder.AddToScheme

	// PushSecretGroupVersionKind is the GroupVersionKind of [PushSecret].
	PushSecretGroupVersionKind = SchemeGroupVersion.WithKind(PushSecretKind)
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &PushSecret{}, &PushSecretList{})
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}
