package apply_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
)

// laggingCache answers typed reads as an informer cache that has not seen anything
// yet, and passes unstructured ones to the API server, as a manager's client does.
func laggingCache(c client.WithWatch) client.Client {
	return interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*unstructured.Unstructured); ok {
				return c.Get(ctx, key, obj, opts...)
			}
			return errors.New("typed read served by a cache that has not synced")
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*unstructured.UnstructuredList); ok {
				return c.List(ctx, list, opts...)
			}
			return nil // the cache holds nothing yet
		},
	})
}

func TestUncachedReadsGoPastTheCache(t *testing.T) {
	ns := env.Namespace(t)
	ctx := context.Background()
	for _, name := range []string{"a", "b"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"pick": name}},
			Data: map[string]string{"k": name}}
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	watch, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	c := laggingCache(watch)

	var cached corev1.ConfigMapList
	if err := c.List(ctx, &cached, client.InNamespace(ns)); err != nil || len(cached.Items) != 0 {
		t.Fatalf("the lagging cache lists %d ConfigMaps (%v); the test needs it empty", len(cached.Items), err)
	}
	var list corev1.ConfigMapList
	if err := apply.ListUncached(ctx, c, &list, client.InNamespace(ns), client.MatchingLabels{"pick": "b"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "b" || list.Items[0].Data["k"] != "b" {
		t.Fatalf("ListUncached = %+v, want ConfigMap b with its data", list.Items)
	}
	var got corev1.ConfigMap
	if err := apply.GetUncached(ctx, c, client.ObjectKey{Namespace: ns, Name: "a"}, &got); err != nil || got.Data["k"] != "a" {
		t.Fatalf("GetUncached = %+v, %v", got.Data, err)
	}
}

func TestUncachedUnknownKind(t *testing.T) {
	c, err := client.New(env.Config, client.Options{Scheme: runtime.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	err = apply.ListUncached(context.Background(), c, &corev1.ConfigMapList{})
	if !errors.Is(err, apply.ErrUnknownKind) {
		t.Fatalf("ListUncached with a scheme that lacks the kind: %v, want ErrUnknownKind", err)
	}
	err = apply.GetUncached(context.Background(), c, client.ObjectKey{Namespace: "x", Name: "y"}, &corev1.ConfigMap{})
	if !errors.Is(err, apply.ErrUnknownKind) {
		t.Fatalf("GetUncached with a scheme that lacks the kind: %v, want ErrUnknownKind", err)
	}
}
