package apply_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// cachedApplier starts a manager whose requests the returned counter counts, and wraps
// its cached client into an Applier with opts.
func cachedApplier(t *testing.T, opts apply.ApplierOptions) (*apply.Applier, *testenv.RequestCounter) {
	t.Helper()
	return cachedApplierWith(t, opts, cache.Options{}, false)
}

// cachedApplierWith is cachedApplier with cache options; live sets opts.APIReader to
// the manager's API reader.
func cachedApplierWith(t *testing.T, opts apply.ApplierOptions, cacheOpts cache.Options, live bool) (*apply.Applier, *testenv.RequestCounter) {
	t.Helper()
	mgr, counter := env.StartManager(t, ctrl.Options{Cache: cacheOpts})
	if live {
		opts.APIReader = mgr.GetAPIReader()
	}
	return apply.NewApplier(mgr.GetClient(), opts), counter
}

// settle applies until a pass is skipped: the informer has caught up with the last apply.
func settle(ctx context.Context, t *testing.T, a *apply.Applier, owner client.Object, build func() client.Object) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		ctx, writes := apply.WithWrites(ctx)
		if err := apply.EnsureObject(ctx, a, env.Scheme, owner, build(), apply.FieldManager); err != nil {
			return false, err
		}
		all := writes.All()
		return len(all) == 1 && all[0].Action == apply.ActionSkipped, nil
	})
	if err != nil {
		t.Fatalf("the applier never skipped a converged apply: %v", err)
	}
}

func TestApplierConvergedPassSendsNothing(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	a, counter := cachedApplier(t, apply.ApplierOptions{FieldManager: "identity-operator"})
	build := func() client.Object { return desiredDeployment(ns) }

	ctx1, writes := apply.WithWrites(ctx)
	if err := apply.EnsureObject(ctx1, a, env.Scheme, owner, desiredDeployment(ns), apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if got := writes.All(); len(got) != 1 || got[0].Action != apply.ActionCreated {
		t.Fatalf("first apply reported %v, want one Created", got)
	}
	settle(ctx, t, a, owner, build)
	counter.Reset()
	for range 5 {
		ctxN, writes := apply.WithWrites(ctx)
		got := desiredDeployment(ns)
		if err := apply.EnsureObject(ctxN, a, env.Scheme, owner, got, apply.FieldManager); err != nil {
			t.Fatal(err)
		}
		if w := writes.All(); len(w) != 1 || w[0].Action != apply.ActionSkipped {
			t.Fatalf("converged apply reported %v, want one Skipped", w)
		}
		if got.UID == "" || got.Spec.Template.Spec.Containers[0].Image != "registry.example/app:1" {
			t.Errorf("a skipped apply did not fill the object from the cache: %+v", got.ObjectMeta)
		}
	}
	if n := counter.Total(); n != 0 {
		t.Errorf("5 converged applies sent %d requests, want 0", n)
	}
}

func TestApplierRepairsDriftInOnePass(t *testing.T) {
	ctx := context.Background()
	cases := map[string]struct {
		reason string
		drift  func(t *testing.T, ns string)
	}{
		"kubectl edit of an applied field": {
			reason: "an Update takes the field from our manager",
			drift: func(t *testing.T, ns string) {
				cur := &appsv1.Deployment{}
				if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "child"}, cur); err != nil {
					t.Fatal(err)
				}
				cur.Spec.Template.Spec.Containers[0].Image = "registry.example/app:hand-edited"
				if err := env.Client.Update(ctx, cur, client.FieldOwner("kubectl-edit")); err != nil {
					t.Fatal(err)
				}
			},
		},
		"another manager forces one of our fields": {
			reason: "a forced apply moves the field to the other manager",
			drift: func(t *testing.T, ns string) {
				ac := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
					"metadata": map[string]any{"name": "child", "namespace": ns},
					"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
						map[string]any{"name": "app", "image": "registry.example/app:other"}}}}}}
				u := &unstructured.Unstructured{Object: ac}
				if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("other-operator"), client.ForceOwnership); err != nil {
					t.Fatal(err)
				}
			},
		},
		"deleted child": {
			reason: "the informer no longer has it",
			drift: func(t *testing.T, ns string) {
				if err := env.Client.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns}}); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			a, _ := cachedApplier(t, apply.ApplierOptions{FieldManager: "identity-operator"})
			build := func() client.Object { return desiredDeployment(ns) }
			settle(ctx, t, a, owner, build)

			tc.drift(t, ns)
			// Wait until the informer sees the drift, then one pass repairs it.
			err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
				ctx, writes := apply.WithWrites(ctx)
				got := desiredDeployment(ns)
				if err := apply.EnsureObject(ctx, a, env.Scheme, owner, got, apply.FieldManager); err != nil {
					return false, err
				}
				return writes.All()[0].Action != apply.ActionSkipped, nil
			})
			if err != nil {
				t.Fatalf("%s: the drift was never repaired: %v", tc.reason, err)
			}
			stored := &appsv1.Deployment{}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "child"}, stored); err != nil {
				t.Fatal(err)
			}
			if img := stored.Spec.Template.Spec.Containers[0].Image; img != "registry.example/app:1" {
				t.Errorf("%s: image after the repairing pass = %q", tc.reason, img)
			}
		})
	}
}

func TestApplierWritesUnderTheOperatorsFieldManager(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	a := apply.NewApplier(env.Client, apply.ApplierOptions{FieldManager: "dashboard-operator"})
	cm := desiredConfigMap(ns)
	if err := apply.EnsureObject(ctx, a, env.Scheme, owner, cm, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	created := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "created", Namespace: ns}, Data: map[string]string{"k": "v"}}
	if err := a.Create(ctx, created); err != nil {
		t.Fatal(err)
	}
	var managers []string
	for _, obj := range []client.Object{cm, created} {
		for _, mf := range obj.GetManagedFields() {
			managers = append(managers, mf.Manager+"/"+string(mf.Operation))
		}
	}
	// EnsureObject creates under dashboard-operator-create, Create under the name itself.
	want := []string{"dashboard-operator-create/Update", "dashboard-operator/Update"}
	if diff := cmp.Diff(want, managers); diff != "" {
		t.Errorf("managedFields managers (-want +got):\n%s", diff)
	}
}

func TestApplierReportsWrites(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	a := apply.NewApplier(env.Client, apply.ApplierOptions{DisableSkip: true})
	ctx, writes := apply.WithWrites(ctx)
	cm := desiredConfigMap(ns)
	steps := []func(){
		func() { _ = apply.EnsureObject(ctx, a, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager) },
		func() { _ = apply.EnsureObject(ctx, a, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager) },
		func() {
			cm.Data = map[string]string{"key": "other"}
			_ = apply.EnsureObject(ctx, a, env.Scheme, owner, cm, apply.FieldManager)
		},
		func() {
			_, _ = apply.DeleteControlled(ctx, a, owner, &corev1.ConfigMap{}, client.ObjectKeyFromObject(cm))
		},
	}
	for _, s := range steps {
		s()
	}
	var got []string
	for _, w := range writes.All() {
		got = append(got, w.String())
	}
	want := []string{
		"ConfigMap " + ns + "/child created",
		"ConfigMap " + ns + "/child unchanged",
		"ConfigMap " + ns + "/child configured data.key",
		"ConfigMap " + ns + "/child deleted",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if n := len(writes.Changed()); n != 3 {
		t.Errorf("Changed() = %d writes, want 3", n)
	}
}

func TestApplierWithLabelFilteredCache(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	users := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "users-password", Namespace: ns},
		Data: map[string][]byte{"password": []byte("x")}}
	if err := env.Client.Create(ctx, users); err != nil {
		t.Fatal(err)
	}
	a, counter := cachedApplierWith(t, apply.ApplierOptions{FieldManager: "glance-operator"},
		apply.CacheOptions("glance-operator"), true)

	// A Secret the operator did not write is outside the cache, and still found.
	got := &corev1.Secret{}
	if err := a.Get(ctx, client.ObjectKeyFromObject(users), got); err != nil || string(got.Data["password"]) != "x" {
		t.Fatalf("unlabelled Secret through the Applier: %v (data %v)", err, got.Data)
	}
	// What the Applier writes carries the label, so the cache holds it and a converged
	// pass sends nothing.
	cm := desiredConfigMap(ns)
	if err := apply.EnsureObject(ctx, a, env.Scheme, owner, cm, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if cm.Labels[apply.ManagedByLabel] != "glance-operator" {
		t.Errorf("applied labels = %v, want %s=glance-operator", cm.Labels, apply.ManagedByLabel)
	}
	settle(ctx, t, a, owner, func() client.Object { return desiredConfigMap(ns) })
	// The informers the Gets above started may still open their watches: ExpectQuiet
	// waits for a quiet pass, then asserts three more send nothing.
	testenv.ExpectQuiet(t, counter, 0, func(ctx context.Context) error {
		return apply.EnsureObject(ctx, a, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager)
	})
	ctx2, writes := apply.WithWrites(ctx)
	if err := apply.EnsureObject(ctx2, a, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if w := writes.All(); len(w) != 1 || w[0].Action != apply.ActionSkipped {
		t.Errorf("converged apply of a labelled ConfigMap recorded %v, want one Skipped", w)
	}
	// The cache lists only the labelled ConfigMaps.
	list := &corev1.ConfigMapList{}
	if err := a.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "child" {
		var names []string
		for _, i := range list.Items {
			names = append(names, i.Name)
		}
		t.Errorf("cached ConfigMaps = %v, want only the applied child (not the owner)", names)
	}
}
