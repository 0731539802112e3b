package deployment_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

type runtimeApplyConfiguration = runtime.ApplyConfiguration

// withWatch returns a client.WithWatch on the environment, for interceptor.NewClient.
func withWatch(t testing.TB) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var (
	applyErrNilOwner          = apply.ErrNilOwner
	applyErrOwnerNotPersisted = apply.ErrOwnerNotPersisted
)

// newUnpersisted is an owner that was never written to the API server (no UID).
func newUnpersisted(ns string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ghost", Namespace: ns}}
}

// unchangedByApply reports whether after is before with no write of the SDK's field
// manager in between: the same generation (no spec change) and the same Apply entry in
// managedFields. Under real controllers resourceVersion also moves with every status
// update, so it cannot tell a no-op apply from a write.
func unchangedByApply(before, after client.Object) bool {
	entry := func(o client.Object) string {
		for _, mf := range o.GetManagedFields() {
			if mf.Manager == apply.FieldManager && mf.Operation == metav1.ManagedFieldsOperationApply {
				return mf.Time.String() + string(mf.FieldsV1.GetRawBytes())
			}
		}
		return ""
	}
	return before.GetGeneration() == after.GetGeneration() && entry(before) == entry(after) && entry(before) != ""
}
