package apply_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// TestApplierSharedByWorkers runs one Applier from several workers (and two owners, as
// two controllers of one manager would) that apply the same objects concurrently: every
// call succeeds, every object ends as desired, the Applier remembers one entry per
// object, and once the informer caught up a full round sends nothing. `make test` runs
// it under the race detector.
func TestApplierSharedByWorkers(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owners := []*corev1.ConfigMap{newNamedOwner(t, ns, "owner-a"), newNamedOwner(t, ns, "owner-b")}
	a, counter := cachedApplier(t, apply.ApplierOptions{FieldManager: "shared-operator"})
	desired := func(owner, i int) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-child-%d", owners[owner].Name, i), Namespace: ns},
			Data:       map[string]string{"key": fmt.Sprint(i)},
		}
	}
	round := func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for w := range 8 {
			wg.Go(func() {
				owner := w % 2
				for i := range 4 {
					if err := apply.EnsureObject(ctx, a, env.Scheme, owners[owner], desired(owner, i), apply.FieldManager); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			return err
		}
		return nil
	}
	for range 3 {
		if err := round(ctx); err != nil {
			t.Fatalf("concurrent apply: %v", err)
		}
	}
	for owner := range owners {
		for i := range 4 {
			got := &corev1.ConfigMap{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(desired(owner, i)), got); err != nil {
				t.Fatal(err)
			}
			if got.Data["key"] != fmt.Sprint(i) || !metav1.IsControlledBy(got, owners[owner]) {
				t.Errorf("%s: data %v, controller %v", got.Name, got.Data, metav1.GetControllerOf(got))
			}
		}
	}
	if n := a.Tracked(); n != 8 {
		t.Errorf("the Applier remembers %d objects, want 8", n)
	}
	testenv.ExpectQuiet(t, counter, 0, round)
}

// TestApplierMemoryIsBounded: the Applier remembers at most MaxTracked objects, forgets
// an object deleted through it, and WithoutSkip sends the apply of a converged object.
func TestApplierMemoryIsBounded(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	a, counter := cachedApplier(t, apply.ApplierOptions{MaxTracked: 2})
	cm := func(i int) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%d", i), Namespace: ns},
			Data: map[string]string{"k": "v"}}
	}
	for i := range 3 {
		if err := apply.EnsureObject(ctx, a, env.Scheme, owner, cm(i), apply.FieldManager); err != nil {
			t.Fatal(err)
		}
	}
	if n := a.Tracked(); n != 2 {
		t.Errorf("after 3 applies with MaxTracked 2 the Applier remembers %d objects", n)
	}
	if err := apply.DeleteObject(ctx, a, cm(2)); err != nil {
		t.Fatal(err)
	}
	if n := a.Tracked(); n > 1 {
		t.Errorf("after deleting one object through the Applier it remembers %d, want at most 1", n)
	}

	// c0 converges (its entry may have been evicted: settle re-applies until skipped),
	// then WithoutSkip still sends its apply. The first apply to c0 (here or in settle)
	// also takes over the create's managedFields entry; the one counted sends the apply
	// alone.
	settle(ctx, t, a, owner, func() client.Object { return cm(0) })
	if err := apply.EnsureObject(apply.WithoutSkip(ctx), a, env.Scheme, owner, cm(0), apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	counter.Reset()
	ctx, writes := apply.WithWrites(apply.WithoutSkip(ctx))
	if err := apply.EnsureObject(ctx, a, env.Scheme, owner, cm(0), apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if got := writes.All(); len(got) != 1 || got[0].Action != apply.ActionUnchanged || counter.Method("PATCH") != 1 {
		t.Errorf("WithoutSkip on a converged object: %v, %d PATCH; want one Unchanged apply sent", got, counter.Method("PATCH"))
	}
}
