package config_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// operatorName is the field manager the Applier tests name the operator with.
const operatorName = "my-operator"

// TestConvergedPassThroughApplierSendsNothing: a create-and-prune pass through an
// Applier over a manager's cache creates the current object and prunes the stale one
// once; once the informers have seen that, a pass sends no request at all.
func TestConvergedPassThroughApplierSendsNothing(t *testing.T) {
	for kname, k := range kinds {
		t.Run(kname, func(t *testing.T) {
			w := newConfigWorld(t, k)
			a, counter := env.StartApplier(t, w.ns, operatorName)
			pass := func(ctx context.Context) error { _, err := w.pass(ctx, a); return err }

			ctx, writes := apply.WithWrites(context.Background())
			if err := pass(ctx); err != nil {
				t.Fatal(err)
			}
			want := []string{
				kname + " " + w.ns + "/" + w.current + " created",
				kname + " " + w.ns + "/" + w.stale + " deleted",
			}
			if diff := cmp.Diff(want, testenv.WriteStrings(writes.All())); diff != "" {
				t.Errorf("first pass writes (-want +got):\n%s", diff)
			}
			testenv.ExpectQuiet(t, counter, 0, pass)
			w.check(t)
			if got := k.existing(t, w.ns, w.stale, w.inUse, w.current); !cmp.Equal(got, []string{w.inUse, w.current}) {
				t.Errorf("objects = %v, want %s and %s", got, w.inUse, w.current)
			}
		})
	}
}

// TestCreateAndPruneRecordWrites: every write of the package is reported through
// apply.Record (created, configured by an adoption, deleted by a prune) and a call that
// finds everything in place records nothing.
func TestCreateAndPruneRecordWrites(t *testing.T) {
	for kname, k := range kinds {
		t.Run(kname, func(t *testing.T) {
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "identity")
			data := map[string]string{"identity.conf": "[DEFAULT]\n"}
			adoptData := map[string]string{"adopted": "yes"}
			adoptName := "cfg-" + config.ContentHash(adoptData)
			if err := env.Client.Create(context.Background(), k.build(metav1.ObjectMeta{Name: adoptName, Namespace: ns,
				Annotations: map[string]string{apply.AdoptAnnotation: "true"}}, adoptData)); err != nil {
				t.Fatal(err)
			}
			ctx, writes := apply.WithWrites(context.Background())

			name, err := k.create(ctx, env.Client, owner, "cfg", ns, data)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := k.create(ctx, env.Client, owner, "cfg", ns, data); err != nil {
				t.Fatal(err)
			}
			if _, err := k.create(ctx, env.Client, owner, "cfg", ns, adoptData); err != nil {
				t.Fatal(err)
			}
			if err := k.prune(ctx, env.Client, owner, "cfg", ns, name, 0); err != nil {
				t.Fatal(err)
			}
			if err := k.prune(ctx, env.Client, owner, "cfg", ns, name, 0); err != nil {
				t.Fatal(err)
			}
			want := []string{
				kname + " " + ns + "/" + name + " created",
				kname + " " + ns + "/" + adoptName + " configured metadata.labels." + config.ConfigBaseLabel + ",metadata.ownerReferences",
				kname + " " + ns + "/" + adoptName + " deleted",
			}
			if diff := cmp.Diff(want, testenv.WriteStrings(writes.All())); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			for _, w := range writes.All() {
				if w.GVK != corev1.SchemeGroupVersion.WithKind(kname) {
					t.Errorf("write %s has GVK %v", w, w.GVK)
				}
			}
		})
	}
}

// TestCreateImmutableThroughApplierWritesUnderTheOperatorsName: the create and the
// adoption patch made through an Applier carry the operator's field manager.
func TestCreateImmutableThroughApplierWritesUnderTheOperatorsName(t *testing.T) {
	for kname, k := range kinds {
		t.Run(kname, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "identity")
			a := apply.NewApplier(env.Client, apply.ApplierOptions{FieldManager: operatorName})
			adoptData := map[string]string{"adopted": "yes"}
			if err := env.Client.Create(ctx, k.build(metav1.ObjectMeta{Name: "cfg-" + config.ContentHash(adoptData), Namespace: ns,
				Annotations: map[string]string{apply.AdoptAnnotation: "true"}}, adoptData), client.FieldOwner("kubectl-create")); err != nil {
				t.Fatal(err)
			}

			created, err := k.create(ctx, a, owner, "cfg", ns, map[string]string{"a": "1"})
			if err != nil {
				t.Fatal(err)
			}
			adopted, err := k.create(ctx, a, owner, "cfg", ns, adoptData)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{operatorName + "/Update"}, testenv.FieldManagers(k.get(t, ns, created))); diff != "" {
				t.Errorf("managers of the created object (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"kubectl-create/Update", operatorName + "/Update"}, testenv.FieldManagers(k.get(t, ns, adopted))); diff != "" {
				t.Errorf("managers of the adopted object (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCreateImmutableReadsPastAStaleCache: when the first read misses an object that
// exists (a cache that has not seen it yet, or a second manager that created it since),
// the create meets AlreadyExists and the object is read again past the cache and
// accepted: no error, no second write.
func TestCreateImmutableReadsPastAStaleCache(t *testing.T) {
	for kname, k := range kinds {
		t.Run(kname, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "identity")
			data := map[string]string{"a": "1"}
			first, err := k.create(ctx, env.Client, owner, "cfg", ns, data)
			if err != nil {
				t.Fatal(err)
			}
			rv := k.get(t, ns, first).GetResourceVersion()
			cfg := rest.CopyConfig(env.Config)
			counter := &testenv.RequestCounter{}
			cfg.Wrap(counter.Wrap)
			ww, err := client.NewWithWatch(cfg, client.Options{Scheme: env.Scheme})
			if err != nil {
				t.Fatal(err)
			}
			stale := interceptor.NewClient(ww, interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, typed := obj.(*unstructured.Unstructured); !typed {
						return apierrors.NewNotFound(schema.GroupResource{Resource: "stale-cache"}, key.Name)
					}
					return c.Get(ctx, key, obj, opts...)
				},
			})
			ctx, writes := apply.WithWrites(ctx)
			got, err := k.create(ctx, stale, owner, "cfg", ns, data)
			if err != nil || got != first {
				t.Fatalf("create past a stale cache = %q, %v; want %q, nil", got, err, first)
			}
			if w := writes.All(); len(w) != 0 {
				t.Errorf("recorded %v, want nothing", w)
			}
			if got := k.get(t, ns, first).GetResourceVersion(); got != rv {
				t.Errorf("resourceVersion moved %s -> %s", rv, got)
			}
			if counter.Method("POST") != 1 {
				t.Errorf("POST = %d, want the one create refused with AlreadyExists", counter.Method("POST"))
			}
		})
	}
}
