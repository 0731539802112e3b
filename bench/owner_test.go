package bench_test

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// benchAppGV is the group/version of the owner CRD in testdata/crds.
var benchAppGV = schema.GroupVersion{Group: "bench.test.c5c3.io", Version: "v1"}

// BenchApp is the owner of the benchmark workload: each one has eight children.
type BenchApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              BenchAppSpec `json:"spec,omitempty"`
}

// BenchAppSpec is what the children are built from.
type BenchAppSpec struct {
	Image    string `json:"image,omitempty"`
	Replicas int32  `json:"replicas,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (a *BenchApp) DeepCopyObject() runtime.Object {
	if a == nil {
		return nil
	}
	out := new(BenchApp)
	out.TypeMeta = a.TypeMeta
	a.DeepCopyInto(&out.ObjectMeta)
	out.Spec = a.Spec
	return out
}

// BenchAppList is a list of BenchApps.
type BenchAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchApp `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (l *BenchAppList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(BenchAppList)
	out.TypeMeta = l.TypeMeta
	l.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]BenchApp, len(l.Items))
		for i := range l.Items {
			out.Items[i] = *l.Items[i].DeepCopyObject().(*BenchApp)
		}
	}
	return out
}

// newScheme returns the test kit's scheme with BenchApp and ShardApp registered.
func newScheme() *runtime.Scheme {
	s := testenv.NewScheme()
	s.AddKnownTypes(benchAppGV, &BenchApp{}, &BenchAppList{}, &ShardApp{}, &ShardAppList{})
	metav1.AddToGroupVersion(s, benchAppGV)
	return s
}

var _ client.Object = &BenchApp{}
