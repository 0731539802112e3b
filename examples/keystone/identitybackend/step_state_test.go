package identitybackend

import (
	"context"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// TestStepHandsTheSecretToLaterRows checks the pass state the row leaves for the Config
// and Deployment rows (the pure hand-over; the row's API behaviour is tested on
// envtest in this package's identitybackend_test tests).
func TestStepHandsTheSecretToLaterRows(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	k := &v1alpha1.Keystone{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "keystone", UID: "uid-1"}}
	gated := func(name, domain string) *v1alpha1.KeystoneIdentityBackend {
		b := testBackend(name, domain, metav1.Now().Time)
		b.Generation = 1
		b.Status.Conditions = []metav1.Condition{{Type: ConditionDomainReady, Status: metav1.ConditionTrue, ObservedGeneration: 1,
			Reason: ReasonDomainCreated, LastTransitionTime: metav1.Now()}}
		return b
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(k, gated("b", "zeta"), gated("a", "alpha")).
		WithStatusSubresource(&v1alpha1.KeystoneIdentityBackend{}).Build()

	ctx := reconcile.WithState(context.Background(), &Projection{Secret: "stale", Files: []string{"stale"}})
	if _, err := NewStep(c).Reconcile(ctx, k); err != nil {
		t.Fatal(err)
	}
	st := reconcile.StateFrom[Projection](ctx)
	if !strings.HasPrefix(st.Secret, "keystone-domains-") {
		t.Fatalf("Secret = %q", st.Secret)
	}
	if !slices.Equal(st.Files, []string{"keystone.alpha.conf", "keystone.zeta.conf"}) {
		t.Fatalf("Files = %v", st.Files)
	}

	empty := fake.NewClientBuilder().WithScheme(scheme).WithObjects(k.DeepCopy()).Build()
	if _, err := NewStep(empty).Reconcile(ctx, k); err != nil {
		t.Fatal(err)
	}
	if st := reconcile.StateFrom[Projection](ctx); st.Secret != "" || st.Files != nil {
		t.Fatalf("without backends the state is %q %v, want none", st.Secret, st.Files)
	}
}
