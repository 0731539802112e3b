package config_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// kindUnderTest lets one test body exercise the ConfigMap and the Secret variant.
type kindUnderTest struct {
	name      string
	create    func(ctx context.Context, c client.Client, owner client.Object, base, ns string, data map[string]string) (string, error)
	prune     func(ctx context.Context, c client.Client, owner client.Object, base, ns, current string, retain int) error
	pruneWith func(ctx context.Context, c client.Client, owner client.Object, base, ns, current string, opts config.PruneOptions) error
	// build returns an object of the kind with the given metadata and data.
	build func(meta metav1.ObjectMeta, data map[string]string) client.Object
	// read returns the data of a stored object.
	read func(obj client.Object) map[string]string
	// immutable reports whether a stored object is immutable.
	immutable func(obj client.Object) bool
	// empty returns an empty object of the kind to Get into.
	empty func() client.Object
}

var kinds = map[string]kindUnderTest{
	"ConfigMap": {
		name: "ConfigMap",
		create: func(ctx context.Context, c client.Client, owner client.Object, base, ns string, data map[string]string) (string, error) {
			return config.CreateImmutableConfigMap(ctx, c, env.Scheme, owner, base, ns, data)
		},
		prune:     config.PruneImmutableConfigMaps,
		pruneWith: config.PruneImmutableConfigMapsWithOptions,
		build: func(meta metav1.ObjectMeta, data map[string]string) client.Object {
			return &corev1.ConfigMap{ObjectMeta: meta, Data: data, Immutable: new(true)}
		},
		read:      func(obj client.Object) map[string]string { return obj.(*corev1.ConfigMap).Data },
		immutable: func(obj client.Object) bool { im := obj.(*corev1.ConfigMap).Immutable; return im != nil && *im },
		empty:     func() client.Object { return &corev1.ConfigMap{} },
	},
	"Secret": {
		name: "Secret",
		create: func(ctx context.Context, c client.Client, owner client.Object, base, ns string, data map[string]string) (string, error) {
			return config.CreateImmutableSecret(ctx, c, env.Scheme, owner, base, ns, toBytes(data))
		},
		prune:     config.PruneImmutableSecrets,
		pruneWith: config.PruneImmutableSecretsWithOptions,
		build: func(meta metav1.ObjectMeta, data map[string]string) client.Object {
			return &corev1.Secret{ObjectMeta: meta, Data: toBytes(data), Immutable: new(true)}
		},
		read: func(obj client.Object) map[string]string {
			out := map[string]string{}
			for k, v := range obj.(*corev1.Secret).Data {
				out[k] = string(v)
			}
			return out
		},
		immutable: func(obj client.Object) bool { im := obj.(*corev1.Secret).Immutable; return im != nil && *im },
		empty:     func() client.Object { return &corev1.Secret{} },
	},
}

func toBytes(data map[string]string) map[string][]byte {
	if data == nil {
		return nil
	}
	out := make(map[string][]byte, len(data))
	for k, v := range data {
		out[k] = []byte(v)
	}
	return out
}

// newOwner creates a persisted ConfigMap named name in ns to act as controlling owner.
func newOwner(t testing.TB, ns, name string) *corev1.ConfigMap {
	t.Helper()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if err := env.Client.Create(context.Background(), owner); err != nil {
		t.Fatalf("create owner: %v", err)
	}
	return owner
}

// controllerRef is the controller reference CreateImmutable* sets for owner.
func controllerRef(owner client.Object) metav1.OwnerReference {
	return *metav1.NewControllerRef(owner, corev1.SchemeGroupVersion.WithKind("ConfigMap"))
}

// get reads the object of kind k named name in ns; nil when it does not exist.
func (k kindUnderTest) get(t testing.TB, ns, name string) client.Object {
	t.Helper()
	obj := k.empty()
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", k.name, ns, name, err)
	}
	return obj
}

// seed creates an object of kind k directly, bypassing CreateImmutable*.
func (k kindUnderTest) seed(t testing.TB, ns, name string, labels map[string]string, refs ...metav1.OwnerReference) client.Object {
	t.Helper()
	obj := k.build(metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, OwnerReferences: refs},
		map[string]string{"name": name})
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("seed %s %s/%s: %v", k.name, ns, name, err)
	}
	return obj
}

// names returns which of want exist in ns.
func (k kindUnderTest) existing(t testing.TB, ns string, names ...string) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		if k.get(t, ns, n) != nil {
			out = append(out, n)
		}
	}
	return out
}

// warmClient returns a counting client whose REST mapper already knows the core and
// apps groups, with its counter reset, so that only the requests under test count.
func warmClient(t testing.TB, ns string) (client.Client, *testenv.RequestCounter) {
	t.Helper()
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	for _, list := range []client.ObjectList{&corev1.ConfigMapList{}, &appsv1.ReplicaSetList{}} {
		if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	counter.Reset()
	return c, counter
}
