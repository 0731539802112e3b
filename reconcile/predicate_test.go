package reconcile_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

// TestIgnoreStatusWrites feeds the predicate old/new pairs read from the API server
// around real writes.
func TestIgnoreStatusWrites(t *testing.T) {
	ctx := context.Background()
	key := createWidget(t, env.Namespace(t))
	p := reconcile.IgnoreStatusWrites()

	tests := []struct {
		name  string
		write func(w *Widget) error
		want  bool
	}{
		{"status write", func(w *Widget) error {
			reconcile.MarkTrue(w, "ConfigReady", "ConfigRendered", "")
			return env.Client.Status().Update(ctx, w)
		}, false},
		{"own finalizer", func(w *Widget) error {
			_, err := reconcile.AddFinalizer(ctx, env.Client, w, widgetFinalizer)
			return err
		}, false},
		{"spec change", func(w *Widget) error { w.Spec.Replicas++; return env.Client.Update(ctx, w) }, true},
		{"label change", func(w *Widget) error { w.Labels = map[string]string{"tier": "web"}; return env.Client.Update(ctx, w) }, true},
		{"annotation change", func(w *Widget) error {
			w.Annotations = map[string]string{"example.com/pause": "true"}
			return env.Client.Update(ctx, w)
		}, true},
		{"deletion start", func(w *Widget) error { return env.Client.Delete(ctx, w) }, true},
	}
	for _, tc := range tests {
		oldObj := getWidget(t, key)
		if err := tc.write(oldObj.DeepCopyObject().(*Widget)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		newObj := getWidget(t, key)
		if oldObj.ResourceVersion == newObj.ResourceVersion {
			t.Fatalf("%s: the write did not change the object", tc.name)
		}
		if got := p.Update(event.UpdateEvent{ObjectOld: oldObj, ObjectNew: newObj}); got != tc.want {
			t.Errorf("%s: Update = %v, want %v", tc.name, got, tc.want)
		}
	}
	w := getWidget(t, key)
	if !p.Create(event.CreateEvent{Object: w}) || !p.Delete(event.DeleteEvent{Object: w}) || !p.Generic(event.GenericEvent{Object: w}) {
		t.Error("create, delete or generic events filtered")
	}
	if p.Update(event.UpdateEvent{ObjectNew: w}) {
		t.Error("update event without old object passed")
	}
	// Let the namespace go without the finalizer holding the widget.
	if _, err := reconcile.RemoveFinalizer(ctx, env.Client, w, widgetFinalizer); err != nil {
		t.Fatal(err)
	}
	var _ client.Object = w
}

// TestIgnoreStatusWritesDeletionStart tests the deletionTimestamp clause on its own. The
// API server bumps metadata.generation when it sets deletionTimestamp on an object with
// finalizers, so the "deletion start" case above passes on the generation check alone;
// here old and new objects are built by hand with equal generations, labels and
// annotations.
func TestIgnoreStatusWritesDeletionStart(t *testing.T) {
	p := reconcile.IgnoreStatusWrites()
	deleting := metav1.NewTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	widget := func(deletionTimestamp *metav1.Time) *Widget {
		return &Widget{ObjectMeta: metav1.ObjectMeta{
			Name: "widget", Namespace: "default", Generation: 4, ResourceVersion: "7",
			Labels: map[string]string{"tier": "web"}, Finalizers: []string{widgetFinalizer},
			DeletionTimestamp: deletionTimestamp,
		}}
	}

	tests := []struct {
		name     string
		old, new *metav1.Time
		want     bool
	}{
		{"deletion start", nil, &deleting, true},
		{"update while deleting", &deleting, &deleting, false},
		{"no deletion", nil, nil, false},
	}
	for _, tc := range tests {
		oldObj, newObj := widget(tc.old), widget(tc.new)
		newObj.ResourceVersion = "8"
		if got := p.Update(event.UpdateEvent{ObjectOld: oldObj, ObjectNew: newObj}); got != tc.want {
			t.Errorf("%s: Update = %v, want %v", tc.name, got, tc.want)
		}
	}
}
