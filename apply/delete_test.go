package apply_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

func TestDeleteControlled(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	key := client.ObjectKey{Namespace: ns, Name: "child"}

	// Missing: nothing to do.
	if foreign, err := apply.DeleteControlled(ctx, env.Client, owner, &corev1.ConfigMap{}, key); err != nil || foreign {
		t.Fatalf("missing child: foreign=%v err=%v, want false, nil", foreign, err)
	}

	// Controlled: deleted.
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if foreign, err := apply.DeleteControlled(ctx, env.Client, owner, &corev1.ConfigMap{}, key); err != nil || foreign {
		t.Fatalf("controlled child: foreign=%v err=%v, want false, nil", foreign, err)
	}
	if err := env.Client.Get(ctx, key, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("controlled child still exists: %v", err)
	}

	// Someone else's object of the same name: left alone, reported as foreign.
	foreignCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns}}
	if err := env.Client.Create(ctx, foreignCM); err != nil {
		t.Fatal(err)
	}
	if foreign, err := apply.DeleteControlled(ctx, env.Client, owner, &corev1.ConfigMap{}, key); err != nil || !foreign {
		t.Fatalf("foreign object: foreign=%v err=%v, want true, nil", foreign, err)
	}
	if err := env.Client.Get(ctx, key, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("foreign object was deleted: %v", err)
	}

	// A kind the cluster does not serve has nothing to delete.
	unserved := &unstructured.Unstructured{}
	unserved.SetGroupVersionKind(schema.GroupVersionKind{Group: "nowhere.example", Version: "v1", Kind: "Ghost"})
	if foreign, err := apply.DeleteControlled(ctx, env.Client, owner, unserved, key); err != nil || foreign {
		t.Fatalf("unserved kind: foreign=%v err=%v, want false, nil", foreign, err)
	}

	if _, err := apply.DeleteControlled(ctx, env.Client, nil, &corev1.ConfigMap{}, key); !errors.Is(err, apply.ErrNilOwner) {
		t.Fatalf("nil owner: err=%v, want ErrNilOwner", err)
	}
	if _, err := apply.DeleteControlled(ctx, env.Client, owner, nil, key); !errors.Is(err, apply.ErrNilObject) {
		t.Fatalf("nil object: err=%v, want ErrNilObject", err)
	}
	if err := apply.DeleteObject(ctx, env.Client, (*corev1.ConfigMap)(nil)); !errors.Is(err, apply.ErrNilObject) {
		t.Fatalf("DeleteObject(nil): err=%v, want ErrNilObject", err)
	}
}

func TestDeleteObject(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	key := client.ObjectKey{Namespace: ns, Name: "child"}
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
		t.Fatal(err)
	}

	// A stale UID (the object was re-created since it was read) protects the new object.
	stale := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns, UID: "00000000-0000-0000-0000-000000000000"}}
	if err := apply.DeleteObject(ctx, env.Client, stale); !apierrors.IsConflict(err) {
		t.Fatalf("delete with a stale UID: err=%v, want a 409 precondition failure", err)
	} else if !strings.Contains(err.Error(), "ConfigMap "+ns+"/child") {
		t.Errorf("error %q does not name the kind and object", err)
	}
	if err := env.Client.Get(ctx, key, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("object deleted despite the UID precondition: %v", err)
	}

	// An object built in code has no UID: deleted by name.
	byName := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}}
	if err := apply.DeleteObject(ctx, env.Client, byName); err != nil {
		t.Fatalf("delete by name: %v", err)
	}
	if err := env.Client.Get(ctx, key, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("object still there after delete by name: %v", err)
	}
	// Missing: no error.
	if err := apply.DeleteObject(ctx, env.Client, byName); err != nil {
		t.Fatalf("delete of a missing object: %v", err)
	}
}
