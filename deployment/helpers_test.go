package deployment_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
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
// manager in between: the same generation (no spec change), the same labels,
// annotations, owner references and finalizers, the same spec, and the same Apply entry
// of the SDK in managedFields. Under real controllers resourceVersion also moves with
// every status update, so it cannot tell a no-op apply from a write; the Apply entry's
// time has one-second resolution, so the comparison of metadata and spec is what
// catches a write landing in the same second as the previous apply.
func unchangedByApply(before, after client.Object) bool {
	entry := func(o client.Object) string {
		for _, mf := range o.GetManagedFields() {
			if mf.Manager == apply.FieldManager && mf.Operation == metav1.ManagedFieldsOperationApply {
				return mf.Time.String() + string(mf.FieldsV1.GetRawBytes())
			}
		}
		return ""
	}
	// written is what a write of the SDK could change: metadata it applies and the spec.
	written := func(o client.Object) map[string]any {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return map[string]any{"error": err.Error()}
		}
		// The Deployment controller stamps deployment.kubernetes.io/revision on its own.
		annotations := map[string]string{}
		for k, v := range o.GetAnnotations() {
			if !strings.HasPrefix(k, "deployment.kubernetes.io/") {
				annotations[k] = v
			}
		}
		return map[string]any{
			"labels": o.GetLabels(), "annotations": annotations,
			"ownerReferences": o.GetOwnerReferences(), "finalizers": o.GetFinalizers(),
			"spec": u["spec"],
		}
	}
	return before.GetGeneration() == after.GetGeneration() && entry(before) == entry(after) && entry(before) != "" &&
		equality.Semantic.DeepEqual(written(before), written(after))
}
