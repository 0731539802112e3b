package reconcile_test

import (
	"context"
	"testing"

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
