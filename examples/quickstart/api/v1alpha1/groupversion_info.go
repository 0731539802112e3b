package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of Memo.
	GroupVersion = schema.GroupVersion{Group: "quickstart.reconciler-sdk.c5c3.io", Version: "v1alpha1"}
	// SchemeBuilder registers Memo and MemoList.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds Memo and MemoList to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Memo{}, &MemoList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
