package apply_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/apply"
)

// bucketLabel stands for a sharded operator's bucket label in these tests.
const bucketLabel = "example.com/bucket"

// bucketOf is the OwnerLabels of these tests: the owner's UID, shortened.
func bucketOf(uid types.UID) map[string]string {
	return map[string]string{bucketLabel: string(uid)[:8], apply.ManagedByLabel: "not-the-field-manager"}
}

// service is a Service child named name; Services are cached whole unless the cache
// selects them.
func service(ns, name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
}

// OwnerLabels are stamped on every object the Applier writes for an owner, from the
// owner's UID (EnsureObject) or the controller reference's (Create); they never replace
// ManagedByLabel, and an Applier without them adds none.
func TestApplierOwnerLabels(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	mgr, _ := env.StartManager(t, ctrl.Options{Cache: apply.CacheOptions("bucket-operator")})
	a := apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{FieldManager: "bucket-operator",
		APIReader: mgr.GetAPIReader(), OwnerLabels: bucketOf})
	want := map[string]string{bucketLabel: string(owner.UID)[:8], apply.ManagedByLabel: "bucket-operator"}

	applied := service(ns, "applied")
	if err := apply.EnsureObject(ctx, a, env.Scheme, owner, applied, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	created := service(ns, "created")
	if err := controllerutil.SetControllerReference(owner, created, env.Scheme); err != nil {
		t.Fatal(err)
	}
	if err := a.Create(ctx, created); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{applied, created} {
		stored := &corev1.Service{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), stored); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, stored.Labels); diff != "" {
			t.Errorf("Service %s labels -want, +got:\n%s", obj.GetName(), diff)
		}
	}

	plain := apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{FieldManager: "bucket-operator", APIReader: mgr.GetAPIReader()})
	unlabelled := service(ns, "plain")
	if err := apply.EnsureObject(ctx, plain, env.Scheme, owner, unlabelled, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if _, ok := unlabelled.Labels[bucketLabel]; ok {
		t.Errorf("an Applier without OwnerLabels stamped %v", unlabelled.Labels)
	}
}

// With SelectedCache, a child the cache does not show (it selects Services by the
// bucket label, and this one has none) is never taken for missing: one someone else
// controls is refused and left as it was, as through a cache that holds every Service;
// a missing one is created by the apply alone and read back by nothing.
func TestApplierSelectedCacheConfirmsMisses(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	other := newNamedOwner(t, ns, "helm-release")
	theirs := service(ns, "child")
	theirs.Spec.Ports[0].Port = 8080
	if err := controllerutil.SetControllerReference(other, theirs, env.Scheme); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	req, err := labels.NewRequirement(bucketLabel, selection.Exists, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := apply.CacheOptions("bucket-operator")
	opts.ByObject[&corev1.Service{}] = cache.ByObject{Label: labels.NewSelector().Add(*req)}
	mgr, counter := env.StartManager(t, ctrl.Options{Cache: opts})
	reader := &countingReader{Reader: mgr.GetAPIReader()}
	a := apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{FieldManager: "bucket-operator",
		APIReader: reader, OwnerLabels: bucketOf, SelectedCache: true})

	err = apply.EnsureObject(ctx, a, env.Scheme, owner, service(ns, "child"), apply.FieldManager)
	if !errors.Is(err, apply.ErrNotControlled) {
		t.Fatalf("EnsureObject over someone else's Service outside the cache: %v, want ErrNotControlled", err)
	}
	stored := &corev1.Service{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(theirs), stored); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(stored, other) || stored.Spec.Ports[0].Port != 8080 || stored.Labels[bucketLabel] != "" {
		t.Errorf("someone else's Service changed: controller %v, port %d, labels %v",
			metav1.GetControllerOf(stored), stored.Spec.Ports[0].Port, stored.Labels)
	}

	before, readsBefore := counter.Total(), reader.count()
	fresh := service(ns, "fresh")
	if err := apply.EnsureObject(ctx, a, env.Scheme, owner, fresh, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if got := counter.Total() - before; got != 1 {
		t.Errorf("creating a missing Service took %d requests, want 1 (the create)", got)
	}
	if got := reader.count() - readsBefore; got != 0 {
		t.Errorf("creating a missing Service read %d objects through the API reader, want 0", got)
	}
	if !metav1.IsControlledBy(fresh, owner) || fresh.Labels[bucketLabel] == "" {
		t.Errorf("created Service: controller %v, labels %v", metav1.GetControllerOf(fresh), fresh.Labels)
	}
}
