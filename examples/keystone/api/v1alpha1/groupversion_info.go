package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of Keystone and KeystoneIdentityBackend.
	GroupVersion = schema.GroupVersion{Group: "keystone.openstack.c5c3.io", Version: "v1alpha1"}
	// SchemeBuilder registers the kinds of the group.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds Keystone, KeystoneIdentityBackend and their lists to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Keystone{}, &KeystoneList{}, &KeystoneIdentityBackend{}, &KeystoneIdentityBackendList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
