package testenv_test

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// TestCreateBeingDeleted: the object is held in deletion for the test, its finalizers
// are released when the test ends, and releasing an object that is gone is no error.
func TestCreateBeingDeleted(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	key := client.ObjectKey{Namespace: ns, Name: "held"}

	t.Run("held", func(t *testing.T) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns,
			Finalizers: []string{"example.com/other"}}}
		got := env.CreateBeingDeleted(t, cm)
		if got != cm {
			t.Errorf("returned %p, want obj (%p) re-read", got, cm)
		}
		if cm.DeletionTimestamp == nil || !slices.Contains(cm.Finalizers, testenv.HoldFinalizer) ||
			!slices.Contains(cm.Finalizers, "example.com/other") {
			t.Errorf("deletionTimestamp %v, finalizers %v; want being deleted, held by %s and example.com/other",
				cm.DeletionTimestamp, cm.Finalizers, testenv.HoldFinalizer)
		}
		stored := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, key, stored); err != nil || stored.DeletionTimestamp == nil {
			t.Fatalf("stored: err %v, deletionTimestamp %v; want it there, being deleted", err, stored.DeletionTimestamp)
		}
	})
	if err := env.Client.Get(ctx, key, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after the test: err = %v, want NotFound (finalizers released)", err)
	}
	env.ReleaseFinalizers(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}})
}
