package reconcile

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Object is a custom resource whose status carries a list of metav1.Condition: the type
// parameter of [Pipeline], [Step] and [RunPass], always a pointer type. Conditions returns
// a pointer to that list, so the SDK's helpers change it in place:
//
//	func (m *Memo) Conditions() *[]metav1.Condition { return &m.Status.Conditions }
type Object interface {
	client.Object
	// Conditions returns a pointer to the object's status.conditions; never nil.
	Conditions() *[]metav1.Condition
}
