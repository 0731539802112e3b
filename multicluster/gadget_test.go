package multicluster_test

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// gadgetGV is the group/version of the test CRD in testdata/crds.
var gadgetGV = schema.GroupVersion{Group: "multicluster.test.c5c3.io", Version: "v1"}

// Gadget is the custom resource the package's tests reconcile: it lives on the
// management cluster and names the target cluster its children land on.
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GadgetSpec   `json:"spec,omitempty"`
	Status            GadgetStatus `json:"status,omitempty"`
}

// GadgetSpec is the desired state of a Gadget.
type GadgetSpec struct {
	Message          string                         `json:"message,omitempty"`
	TargetClusterRef *commonv1.TargetClusterRefSpec `json:"targetClusterRef,omitempty"`
}

// GadgetStatus is the observed state of a Gadget.
type GadgetStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Conditions implements reconcile.Object.
func (g *Gadget) Conditions() *[]metav1.Condition { return &g.Status.Conditions }

// DeepCopyObject implements runtime.Object.
func (g *Gadget) DeepCopyObject() runtime.Object {
	if g == nil {
		return nil
	}
	out := new(Gadget)
	out.TypeMeta = g.TypeMeta
	g.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Message = g.Spec.Message
	if g.Spec.TargetClusterRef != nil {
		ref := *g.Spec.TargetClusterRef
		out.Spec.TargetClusterRef = &ref
	}
	if g.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(g.Status.Conditions))
		for i := range g.Status.Conditions {
			g.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
	return out
}

// GadgetList is a list of Gadgets.
type GadgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gadget `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (l *GadgetList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(GadgetList)
	out.TypeMeta = l.TypeMeta
	l.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Gadget, len(l.Items))
		for i := range l.Items {
			out.Items[i] = *l.Items[i].DeepCopyObject().(*Gadget)
		}
	}
	return out
}

// Sprocket is a kind of the Gadgets' group that only a target cluster serves (a test
// installs its CRD there, never on the management cluster): a child kind the
// management cluster's RESTMapper cannot name.
type Sprocket struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              SprocketSpec `json:"spec,omitempty"`
}

// SprocketSpec is the desired state of a Sprocket.
type SprocketSpec struct {
	Message string `json:"message,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (s *Sprocket) DeepCopyObject() runtime.Object {
	if s == nil {
		return nil
	}
	out := new(Sprocket)
	out.TypeMeta = s.TypeMeta
	s.DeepCopyInto(&out.ObjectMeta)
	out.Spec = s.Spec
	return out
}

// SprocketList is a list of Sprockets.
type SprocketList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Sprocket `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (l *SprocketList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(SprocketList)
	out.TypeMeta = l.TypeMeta
	l.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Sprocket, len(l.Items))
		for i := range l.Items {
			out.Items[i] = *l.Items[i].DeepCopyObject().(*Sprocket)
		}
	}
	return out
}

// newScheme returns the test kit's scheme with Gadget and Sprocket registered.
func newScheme() *runtime.Scheme {
	s := testenv.NewScheme()
	s.AddKnownTypes(gadgetGV, &Gadget{}, &GadgetList{}, &Sprocket{}, &SprocketList{})
	metav1.AddToGroupVersion(s, gadgetGV)
	return s
}
