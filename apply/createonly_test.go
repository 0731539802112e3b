package apply_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// countingReader counts the reads that reach the API reader of an Applier.
type countingReader struct {
	client.Reader
	mu    sync.Mutex
	reads []client.ObjectKey
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.mu.Lock()
	r.reads = append(r.reads, key)
	r.mu.Unlock()
	return r.Reader.Get(ctx, key, obj, opts...)
}

func (r *countingReader) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reads)
}

// labelFilteredApplier starts a manager with apply.CacheOptions(fieldManager) and wraps
// its client into an Applier whose API reader the returned countingReader counts.
func labelFilteredApplier(t *testing.T, fieldManager string) (*apply.Applier, *countingReader, *testenv.RequestCounter) {
	t.Helper()
	mgr, counter := env.StartManager(t, ctrl.Options{Cache: apply.CacheOptions(fieldManager)})
	reader := &countingReader{Reader: mgr.GetAPIReader()}
	return apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{FieldManager: fieldManager, APIReader: reader}), reader, counter
}

// TestApplierCreatesLabelFilteredChildWithoutConfirmingRead: a Secret or ConfigMap that
// the label-filtered cache does not hold and that does not exist is created by the create
// alone, without a read through the API reader, and is then skipped like any other child.
func TestApplierCreatesLabelFilteredChildWithoutConfirmingRead(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	a, reader, _ := labelFilteredApplier(t, "glance-operator")

	cm := desiredConfigMap(ns)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns},
		Data: map[string][]byte{"password": []byte("ours")}}
	for _, obj := range []client.Object{cm, secret} {
		wctx, writes := apply.WithWrites(ctx)
		if err := apply.EnsureObject(wctx, a, env.Scheme, owner, obj, apply.FieldManager); err != nil {
			t.Fatalf("create %T: %v", obj, err)
		}
		if w := writes.All(); len(w) != 1 || w[0].Action != apply.ActionCreated {
			t.Errorf("create %T recorded %v, want one Created", obj, w)
		}
		if obj.GetUID() == "" || !metav1.IsControlledBy(obj, owner) || obj.GetLabels()[apply.ManagedByLabel] != "glance-operator" {
			t.Errorf("created %T: uid %q, controller %v, labels %v", obj, obj.GetUID(), metav1.GetControllerOf(obj), obj.GetLabels())
		}
		if _, ok := entryOf(obj, apply.CreateFieldManager("glance-operator"), metav1.ManagedFieldsOperationUpdate); !ok {
			t.Errorf("created %T has no entry of glance-operator's create: %v", obj, obj.GetManagedFields())
		}
	}
	if n := reader.count(); n != 0 {
		t.Errorf("creating a ConfigMap and a Secret read %d objects through the API reader (%v), want 0", n, reader.reads)
	}
	settle(ctx, t, a, owner, func() client.Object { return desiredConfigMap(ns) })
	settle(ctx, t, a, owner, func() client.Object {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns},
			Data: map[string][]byte{"password": []byte("ours")}}
	})
	stored := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(secret), stored); err != nil || string(stored.Data["password"]) != "ours" {
		t.Errorf("stored Secret: %v, data %v", err, stored.Data)
	}
}

// TestApplierLabelFilteredNeverTakesWhatIsNotOurs: a ConfigMap outside the label-filtered
// cache that someone else made is refused as through a plain client, and left as it was;
// an unowned one annotated for adoption is adopted.
func TestApplierLabelFilteredNeverTakesWhatIsNotOurs(t *testing.T) {
	cases := map[string]struct {
		existing func(t *testing.T, ns string) *corev1.ConfigMap
		want     error
	}{
		"unowned": {
			existing: func(t *testing.T, ns string) *corev1.ConfigMap { return existingChild(t, ns, nil) },
			want:     apply.ErrNotControlled,
		},
		"controlled by someone else": {
			existing: func(t *testing.T, ns string) *corev1.ConfigMap {
				other := newNamedOwner(t, ns, "helm-release")
				return existingChild(t, ns, func(cm *corev1.ConfigMap) {
					if err := controllerutil.SetControllerReference(other, cm, env.Scheme); err != nil {
						t.Fatal(err)
					}
				})
			},
			want: apply.ErrNotControlled,
		},
		"being deleted": {
			existing: func(t *testing.T, ns string) *corev1.ConfigMap { return beingDeleted(t, ns, true) },
			want:     apply.ErrBeingDeleted,
		},
		"unowned, annotated for adoption": {
			existing: func(t *testing.T, ns string) *corev1.ConfigMap {
				return existingChild(t, ns, func(cm *corev1.ConfigMap) {
					cm.Annotations = map[string]string{apply.AdoptAnnotation: "true"}
				})
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			before := tc.existing(t, ns)
			a, reader, counter := labelFilteredApplier(t, "glance-operator")

			got := desiredConfigMap(ns)
			err := apply.EnsureObject(ctx, a, env.Scheme, owner, got, apply.FieldManager)
			if reader.count() == 0 {
				t.Error("the existing ConfigMap was never read through the API reader")
			}
			after := &corev1.ConfigMap{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(before), after); err != nil {
				t.Fatalf("existing object lost: %v", err)
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("annotated unowned object not adopted: %v", err)
				}
				if !metav1.IsControlledBy(after, owner) || after.Data["key"] != "value" {
					t.Errorf("adopted object = controller %v, data %v", metav1.GetControllerOf(after), after.Data)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("error = %v, want errors.Is %v", err, tc.want)
			}
			// The one write of a refused apply is the create, which the
			// existing object fails.
			if w := counter.Writes(); w != 1 {
				t.Errorf("a refused apply sent %d writes, want 1 (the create)", w)
			}
			if after.ResourceVersion != before.ResourceVersion || after.Data["key"] != "theirs" {
				t.Errorf("existing object was changed: rv %s -> %s, data %v", before.ResourceVersion, after.ResourceVersion, after.Data)
			}
			if metav1.IsControlledBy(after, owner) && errors.Is(tc.want, apply.ErrNotControlled) {
				t.Error("the owner became the controller of an object it was refused")
			}
		})
	}
}
