package reconcile

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Object is a custom resource whose status carries a list of metav1.Condition. The type
// parameter of [Pipeline], [Step] and [RunPass] is always a pointer type, such as
// *v1alpha1.Horizon, that implements it.
//
// Conditions returns a pointer to the status' condition list, so that the helpers of this
// package and of the other SDK packages (which take a *[]metav1.Condition) change it in
// place:
//
//	func (h *Horizon) Conditions() *[]metav1.Condition { return &h.Status.Conditions }
type Object interface {
	client.Object
	// Conditions returns a pointer to the object's status.conditions; never nil.
	Conditions() *[]metav1.Condition
}
