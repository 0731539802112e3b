package bench_test

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ShardApp is the custom resource of the sharding comparison (testdata/crds): its one
// child is a ConfigMap carrying spec.message, and its status holds the conditions a
// multicluster.CRReconciler writes.
type ShardApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ShardAppSpec   `json:"spec,omitempty"`
	Status            ShardAppStatus `json:"status,omitempty"`
}

// ShardAppSpec is what the child is built from.
type ShardAppSpec struct {
	Message string `json:"message,omitempty"`
}

// ShardAppStatus is the observed state of a ShardApp.
type ShardAppStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Conditions implements reconcile.Object.
func (a *ShardApp) Conditions() *[]metav1.Condition { return &a.Status.Conditions }

// DeepCopyObject implements runtime.Object.
func (a *ShardApp) DeepCopyObject() runtime.Object {
	if a == nil {
		return nil
	}
	out := new(ShardApp)
	out.TypeMeta = a.TypeMeta
	a.DeepCopyInto(&out.ObjectMeta)
	out.Spec = a.Spec
	if a.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(a.Status.Conditions))
		for i := range a.Status.Conditions {
			a.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
	return out
}

// ShardAppList is a list of ShardApps.
type ShardAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ShardApp `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (l *ShardAppList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(ShardAppList)
	out.TypeMeta = l.TypeMeta
	l.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]ShardApp, len(l.Items))
		for i := range l.Items {
			out.Items[i] = *l.Items[i].DeepCopyObject().(*ShardApp)
		}
	}
	return out
}
