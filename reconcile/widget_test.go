package reconcile_test

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// widgetGV is the group/version of the test CRD in testdata/crds.
var widgetGV = schema.GroupVersion{Group: "reconcile.test.c5c3.io", Version: "v1"}

// Widget is the custom resource the package's tests reconcile.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec   `json:"spec,omitempty"`
	Status            WidgetStatus `json:"status,omitempty"`
}

// WidgetSpec is the desired state of a Widget.
type WidgetSpec struct {
	Replicas int32  `json:"replicas,omitempty"`
	Message  string `json:"message,omitempty"`
}

// WidgetStatus is the observed state of a Widget.
type WidgetStatus struct {
	Endpoint   string             `json:"endpoint,omitempty"`
	Phase      string             `json:"phase,omitempty"`
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Conditions implements reconcile.Object.
func (w *Widget) Conditions() *[]metav1.Condition { return &w.Status.Conditions }

// DeepCopyObject implements runtime.Object.
func (w *Widget) DeepCopyObject() runtime.Object {
	if w == nil {
		return nil
	}
	out := new(Widget)
	out.TypeMeta = w.TypeMeta
	w.DeepCopyInto(&out.ObjectMeta)
	out.Spec = w.Spec
	out.Status.Endpoint = w.Status.Endpoint
	out.Status.Phase = w.Status.Phase
	if w.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(w.Status.Conditions))
		for i := range w.Status.Conditions {
			w.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
	return out
}

// WidgetList is a list of Widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (l *WidgetList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(WidgetList)
	out.TypeMeta = l.TypeMeta
	l.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Widget, len(l.Items))
		for i := range l.Items {
			out.Items[i] = *l.Items[i].DeepCopyObject().(*Widget)
		}
	}
	return out
}

// newScheme returns the test kit's scheme with Widget registered.
func newScheme() *runtime.Scheme {
	s := testenv.NewScheme()
	s.AddKnownTypes(widgetGV, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, widgetGV)
	return s
}

var _ client.Object = &Widget{}
