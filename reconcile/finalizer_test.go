package reconcile_test

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

func TestFinalizers(t *testing.T) {
	ctx := context.Background()
	key := createWidget(t, env.Namespace(t))
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	w := getWidget(t, key)
	// Warm the client's REST mapper up so that only the finalizer's requests count.
	if err := c.Get(ctx, key, &Widget{}); err != nil {
		t.Fatal(err)
	}
	// A condition set in memory before the patch must survive it.
	reconcile.MarkTrue(w, "SecretsReady", "SecretsAvailable", "")

	counter.Reset()
	if added, err := reconcile.AddFinalizer(ctx, c, w, widgetFinalizer); err != nil || !added {
		t.Fatalf("AddFinalizer = %v, %v", added, err)
	}
	if counter.Method("PATCH") != 1 || counter.Total() != 1 {
		t.Errorf("AddFinalizer sent %d requests (%d PATCH), want one PATCH", counter.Total(), counter.Method("PATCH"))
	}
	if !reconcile.IsTrue(w, "SecretsReady") {
		t.Error("AddFinalizer dropped the in-memory condition")
	}
	stored := getWidget(t, key)
	if !controllerutil.ContainsFinalizer(stored, widgetFinalizer) || stored.ResourceVersion != w.ResourceVersion {
		t.Errorf("stored finalizers %v rv %s; in memory rv %s", stored.Finalizers, stored.ResourceVersion, w.ResourceVersion)
	}

	counter.Reset()
	if added, err := reconcile.AddFinalizer(ctx, c, w, widgetFinalizer); err != nil || added || counter.Total() != 0 {
		t.Errorf("second AddFinalizer = %v, %v with %d requests; want no-op", added, err, counter.Total())
	}

	// A stale copy is refused (409) rather than overwriting someone else's finalizers.
	stale := w.DeepCopyObject().(*Widget)
	if _, err := reconcile.AddFinalizer(ctx, c, getWidget(t, key), "example.com/other"); err != nil {
		t.Fatal(err)
	}
	if _, err := reconcile.RemoveFinalizer(ctx, c, stale, widgetFinalizer); !apierrors.IsConflict(err) {
		t.Errorf("RemoveFinalizer on a stale object = %v, want a conflict", err)
	}

	w = getWidget(t, key)
	counter.Reset()
	if removed, err := reconcile.RemoveFinalizer(ctx, c, w, widgetFinalizer); err != nil || !removed {
		t.Fatalf("RemoveFinalizer = %v, %v", removed, err)
	}
	if got := getWidget(t, key).Finalizers; len(got) != 1 || got[0] != "example.com/other" {
		t.Errorf("finalizers after removal = %v, want only the other party's", got)
	}
	counter.Reset()
	if removed, err := reconcile.RemoveFinalizer(ctx, c, w, widgetFinalizer); err != nil || removed || counter.Total() != 0 {
		t.Errorf("second RemoveFinalizer = %v, %v with %d requests; want no-op", removed, err, counter.Total())
	}

	// Removing from an object that is already gone counts as done.
	gone := getWidget(t, key)
	gone.Finalizers = append(gone.Finalizers, widgetFinalizer)
	if _, err := reconcile.RemoveFinalizer(ctx, c, getWidget(t, key), "example.com/other"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, getWidget(t, key)); err != nil {
		t.Fatal(err)
	}
	if removed, err := reconcile.RemoveFinalizer(ctx, c, gone, widgetFinalizer); err != nil || removed {
		t.Errorf("RemoveFinalizer on a deleted object = %v, %v; want false, nil", removed, err)
	}
}
