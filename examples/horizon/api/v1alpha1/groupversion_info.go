package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of Horizon.
	GroupVersion = schema.GroupVersion{Group: "horizon.openstack.c5c3.io", Version: "v1alpha1"}
	// SchemeBuilder registers Horizon and HorizonList.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds Horizon and HorizonList to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Horizon{}, &HorizonList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
