package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
)

var (
	// GroupVersion of Widget.
	GroupVersion = schema.GroupVersion{Group: "testcrd.reconciler-sdk.c5c3.io", Version: "v1"}
	// SchemeBuilder registers Widget and WidgetList.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds Widget and WidgetList to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// WidgetSpec embeds the shared spec blocks as an operator's CR does: optional
// pointers.
type WidgetSpec struct {
	// SecretStoreRef selects the secret store.
	// +optional
	SecretStoreRef *commonv1.SecretStoreRefSpec `json:"secretStoreRef,omitempty"`
	// TargetClusterRef selects the target cluster.
	// +optional
	TargetClusterRef *commonv1.TargetClusterRefSpec `json:"targetClusterRef,omitempty"`
}

// Widget is the test kind.
// +kubebuilder:object:root=true
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the embedded blocks.
	Spec WidgetSpec `json:"spec,omitempty"`
}

// WidgetList is a list of Widget.
// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Widgets.
	Items []Widget `json:"items"`
}
