package apply_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// entryOf returns manager's managedFields entry of operation op (not of a subresource).
func entryOf(obj client.Object, manager string, op metav1.ManagedFieldsOperationType) (metav1.ManagedFieldsEntry, bool) {
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager == manager && mf.Operation == op && mf.Subresource == "" {
			return mf, true
		}
	}
	return metav1.ManagedFieldsEntry{}, false
}

// fieldsOf parses a managedFields entry's field set.
func fieldsOf(t *testing.T, mf metav1.ManagedFieldsEntry) map[string]any {
	t.Helper()
	var fields map[string]any
	if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
		t.Fatalf("parse managedFields: %v", err)
	}
	return fields
}

// direct is an Applier over c that reads from the API server (no cache).
func direct(c client.Client) *apply.Applier { return apply.NewApplier(c, apply.ApplierOptions{}) }

// TestEnsureObjectCreatesWithAPost: through an Applier, an object that does not exist is
// created by one POST under CreateFieldManager, not by an apply; its managedFields hold
// the create's Update entry and no Apply entry yet. Through a plain client the apply
// creates it, as every pass applies there.
func TestEnsureObjectCreatesWithAPost(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	got := desiredConfigMap(ns)
	wctx, writes := apply.WithWrites(ctx)
	if err := apply.EnsureObject(wctx, direct(c), env.Scheme, owner, got, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if post, patch := counter.Method(http.MethodPost), counter.Method(http.MethodPatch); post != 1 || patch != 0 {
		t.Errorf("creating sent %d POST and %d PATCH, want 1 POST and no PATCH", post, patch)
	}
	if w := writes.All(); len(w) != 1 || w[0].Action != apply.ActionCreated {
		t.Errorf("recorded %v, want one Created", w)
	}
	if got.UID == "" || got.Data["key"] != "value" || !metav1.IsControlledBy(got, owner) {
		t.Errorf("created object not decoded: uid %q data %v controller %v", got.UID, got.Data, metav1.GetControllerOf(got))
	}
	if _, ok := entryOf(got, apply.CreateFieldManager(apply.FieldManager), metav1.ManagedFieldsOperationUpdate); !ok {
		t.Errorf("no Update entry of %s: %+v", apply.CreateFieldManager(apply.FieldManager), got.GetManagedFields())
	}
	if apply.AppliedBy(got, apply.FieldManager) {
		t.Errorf("the create left an Apply entry of %s: %+v", apply.FieldManager, got.GetManagedFields())
	}

	counter.Reset()
	plain := desiredConfigMap(ns)
	plain.Name = "plain"
	if err := apply.EnsureObject(ctx, c, env.Scheme, owner, plain, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if post, patch := counter.Method(http.MethodPost), counter.Method(http.MethodPatch); post != 0 || patch != 1 {
		t.Errorf("through a plain client creating sent %d POST and %d PATCH, want the apply alone", post, patch)
	}
	if !apply.AppliedBy(plain, apply.FieldManager) {
		t.Errorf("through a plain client: no Apply entry of %s: %+v", apply.FieldManager, plain.GetManagedFields())
	}
}

// TestCreatedObjectIsTakenOverByTheNextApply: the first apply to an object EnsureObject
// created turns the create's entry into the field manager's Apply entry (a JSON patch,
// then the apply): a field the desired object drops is removed, one another manager
// also set stays, and the server defaults the create recorded leave the field manager's
// entry without changing the object.
func TestCreatedObjectIsTakenOverByTheNextApply(t *testing.T) {
	ctx := context.Background()
	create := apply.CreateFieldManager(apply.FieldManager)
	t.Run("dropped field removed", func(t *testing.T) {
		ns := env.Namespace(t)
		owner := newOwner(t, ns)
		withExtra := desiredConfigMap(ns)
		withExtra.Labels["tier"] = "web"
		withExtra.Labels["shared"] = "ours"
		withExtra.Data["extra"] = "x"
		if err := apply.EnsureObject(ctx, direct(env.Client), env.Scheme, owner, withExtra, apply.FieldManager); err != nil {
			t.Fatal(err)
		}
		other := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "child", "namespace": ns, "labels": map[string]any{"shared": "ours"}}}}
		if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(other), client.FieldOwner("other-applier")); err != nil {
			t.Fatal(err)
		}
		c, counter, err := env.CountingClient()
		if err != nil {
			t.Fatal(err)
		}
		got := desiredConfigMap(ns)
		if err := apply.EnsureObject(ctx, direct(c), env.Scheme, owner, got, apply.FieldManager); err != nil {
			t.Fatal(err)
		}
		if post, patch := counter.Method(http.MethodPost), counter.Method(http.MethodPatch); post != 0 || patch != 2 {
			t.Errorf("the first change sent %d POST and %d PATCH, want the managedFields patch and the apply", post, patch)
		}
		if _, ok := got.Labels["tier"]; ok {
			t.Errorf("label tier that only we set is still there: %v", got.Labels)
		}
		if _, ok := got.Data["extra"]; ok {
			t.Errorf("data.extra that only we set is still there: %v", got.Data)
		}
		if got.Labels["shared"] != "ours" {
			t.Errorf("label shared that another manager also set was removed: %v", got.Labels)
		}
		if _, ok := entryOf(got, create, metav1.ManagedFieldsOperationUpdate); ok {
			t.Errorf("the create's entry is still there: %+v", got.GetManagedFields())
		}
		if !apply.AppliedBy(got, apply.FieldManager) {
			t.Errorf("no Apply entry of %s: %+v", apply.FieldManager, got.GetManagedFields())
		}
	})
	t.Run("defaults released", func(t *testing.T) {
		ns := env.Namespace(t)
		owner := newOwner(t, ns)
		dep := desiredDeployment(ns)
		if err := apply.EnsureObject(ctx, direct(env.Client), env.Scheme, owner, dep, apply.FieldManager); err != nil {
			t.Fatal(err)
		}
		mf, ok := entryOf(dep, create, metav1.ManagedFieldsOperationUpdate)
		if !ok || !owns(fieldsOf(t, mf), "f:spec", "f:revisionHistoryLimit") {
			t.Fatalf("the create's entry does not hold the defaulted spec.revisionHistoryLimit: %+v", dep.GetManagedFields())
		}
		defaulted := *dep.Spec.RevisionHistoryLimit
		changed := desiredDeployment(ns)
		changed.Spec.Template.Spec.Containers[0].Image = "registry.example/app:2"
		if err := apply.EnsureObject(ctx, direct(env.Client), env.Scheme, owner, changed, apply.FieldManager); err != nil {
			t.Fatal(err)
		}
		fields := managedFieldsOf(t, changed, apply.FieldManager)
		for _, f := range []string{"f:revisionHistoryLimit", "f:progressDeadlineSeconds", "f:strategy", "f:replicas"} {
			if owns(fields, "f:spec", f) {
				t.Errorf("after the first change the field manager still claims the default spec.%s", strings.TrimPrefix(f, "f:"))
			}
		}
		if changed.Spec.RevisionHistoryLimit == nil || *changed.Spec.RevisionHistoryLimit != defaulted {
			t.Errorf("spec.revisionHistoryLimit = %v, want the default %d kept", changed.Spec.RevisionHistoryLimit, defaulted)
		}
		if changed.Spec.Template.Spec.Containers[0].Image != "registry.example/app:2" {
			t.Errorf("image = %q, want the change applied", changed.Spec.Template.Spec.Containers[0].Image)
		}
	})
}

// TestCreatedObjectKeepsItsFields: until the first apply, the create's entry holds the
// object's fields as an Apply entry would: another manager's Server-Side Apply of one
// of them without force fails with a conflict, and one that lost its controller
// reference is still taken back by the owner.
func TestCreatedObjectKeepsItsFields(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	if err := apply.EnsureObject(ctx, direct(env.Client), env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	theirs := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "child", "namespace": ns}, "data": map[string]any{"key": "theirs"}}}
	err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(theirs), client.FieldOwner("other-applier"))
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), apply.CreateFieldManager(apply.FieldManager)) {
		t.Errorf("another manager's apply of data.key = %v, want a conflict with %s", err, apply.CreateFieldManager(apply.FieldManager))
	}

	stripOwnerReferences(t, ns)
	got := desiredConfigMap(ns)
	if err := apply.EnsureObject(ctx, direct(env.Client), env.Scheme, owner, got, apply.FieldManager); err != nil {
		t.Fatalf("the object this operator created and that lost its controller reference: %v", err)
	}
	if !metav1.IsControlledBy(got, owner) {
		t.Errorf("controller reference not re-asserted: %+v", got.OwnerReferences)
	}
}

// TestApplierRepairsDriftOnACreatedObject: through an Applier the converged pass after
// a create sends nothing, and a field another manager changed is restored in one pass.
func TestApplierRepairsDriftOnACreatedObject(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	a, counter := cachedApplier(t, apply.ApplierOptions{FieldManager: "identity-operator"})
	if err := apply.EnsureObject(ctx, a, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	settle(ctx, t, a, owner, func() client.Object { return desiredConfigMap(ns) })
	counter.Reset()
	if err := apply.EnsureObject(ctx, a, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if n := counter.Total(); n != 0 {
		t.Errorf("the converged pass after a create sent %d requests, want 0", n)
	}

	drifted := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "child"}, drifted); err != nil {
		t.Fatal(err)
	}
	drifted.Data["key"] = "changed-by-hand"
	if err := env.Client.Update(ctx, drifted, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	// The pass that sees the drift (once the informer has it) repairs it by itself.
	var repaired bool
	for deadline := time.Now().Add(10 * time.Second); !repaired && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		wctx, writes := apply.WithWrites(ctx)
		if err := apply.EnsureObject(wctx, a, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
			t.Fatal(err)
		}
		if w := writes.All(); len(w) == 1 && w[0].Action == apply.ActionConfigured {
			repaired = true
		}
	}
	if !repaired {
		t.Fatal("no pass repaired the drift")
	}
	stored := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "child"}, stored); err != nil {
		t.Fatal(err)
	}
	if stored.Data["key"] != "value" {
		t.Errorf("data.key = %q after the repairing pass, want %q", stored.Data["key"], "value")
	}
	if !apply.AppliedBy(stored, "identity-operator") {
		t.Errorf("no Apply entry of identity-operator after the repair: %+v", stored.GetManagedFields())
	}
}

// watchClient is a new client of the test environment that can watch, for interceptor.
func watchClient(t *testing.T) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCreateOnAnObjectSomeoneElseMade: an object made by someone else between the
// lookup and the create fails the create with AlreadyExists; it is then read and
// refused, untouched.
func TestCreateOnAnObjectSomeoneElseMade(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	c := interceptor.NewClient(watchClient(t), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			existingChild(t, ns, nil) // someone else is quicker
			return c.Create(ctx, obj, opts...)
		},
	})
	err := apply.EnsureObject(ctx, direct(c), env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager)
	if !errors.Is(err, apply.ErrNotControlled) {
		t.Fatalf("error = %v, want ErrNotControlled", err)
	}
	stored := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "child"}, stored); err != nil {
		t.Fatal(err)
	}
	if stored.Data["key"] != "theirs" || len(stored.OwnerReferences) != 0 {
		t.Errorf("someone else's object was written: data %v owners %v", stored.Data, stored.OwnerReferences)
	}
}

// TestTakeOverRetriesAStaleRead: the managedFields patch is conditioned on the
// resourceVersion read; when the object moved on since, the patch conflicts, the object
// is read again and the take-over and apply go through.
func TestTakeOverRetriesAStaleRead(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	if err := apply.EnsureObject(ctx, direct(env.Client), env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	jsonPatches := 0
	c := interceptor.NewClient(watchClient(t), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if patch.Type() == types.JSONPatchType {
				if jsonPatches++; jsonPatches == 1 {
					// Another writer moves the object on before the patch lands.
					moved := &corev1.ConfigMap{}
					if err := c.Get(ctx, client.ObjectKeyFromObject(obj), moved); err != nil {
						return err
					}
					moved.Annotations = map[string]string{"touched": "yes"}
					if err := c.Update(ctx, moved, client.FieldOwner("someone-else")); err != nil {
						return err
					}
				}
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	changed := desiredConfigMap(ns)
	changed.Data["key"] = "new"
	if err := apply.EnsureObject(ctx, direct(c), env.Scheme, owner, changed, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if jsonPatches != 2 {
		t.Errorf("managedFields patches = %d, want the conflicting one and its retry", jsonPatches)
	}
	if changed.Data["key"] != "new" || !apply.AppliedBy(changed, apply.FieldManager) {
		t.Errorf("after the retry: data %v, managedFields %+v", changed.Data, changed.GetManagedFields())
	}
	if changed.Annotations["touched"] != "yes" {
		t.Errorf("the other writer's annotation was lost: %v", changed.Annotations)
	}
}

// TestCreatedObjectBeingDeletedIsLeftAlone: a created object being deleted is refused
// before the take-over: no patch, no apply.
func TestCreatedObjectBeingDeletedIsLeftAlone(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	held := desiredConfigMap(ns)
	held.Finalizers = []string{testenv.HoldFinalizer}
	if err := apply.EnsureObject(ctx, direct(env.Client), env.Scheme, owner, held, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	env.DeleteHeld(t, held)
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	changed := desiredConfigMap(ns)
	changed.Data["key"] = "new"
	if err := apply.EnsureObject(ctx, direct(c), env.Scheme, owner, changed, apply.FieldManager); !errors.Is(err, apply.ErrBeingDeleted) {
		t.Fatalf("error = %v, want ErrBeingDeleted", err)
	}
	if w := counter.Writes(); w != 0 {
		t.Errorf("an object being deleted got %d writes", w)
	}
}

// TestLongFieldManagerCreatesByApply: a field manager too long for CreateFieldManager's
// name (the API server takes 128 characters) creates by apply, as before there was a
// create path.
func TestLongFieldManagerCreatesByApply(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	long := strings.Repeat("m", 125)
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	got := desiredConfigMap(ns)
	if err := apply.EnsureObject(ctx, direct(c), env.Scheme, owner, got, long); err != nil {
		t.Fatal(err)
	}
	if post, patch := counter.Method(http.MethodPost), counter.Method(http.MethodPatch); post != 0 || patch != 1 {
		t.Errorf("sent %d POST and %d PATCH, want one apply", post, patch)
	}
	if !apply.AppliedBy(got, long) {
		t.Errorf("no Apply entry of the long field manager: %+v", got.GetManagedFields())
	}
}

// TestCreateAndTakeOverFaultMatrix fails each API call of a create followed by a change
// (the create, the lookup, the managedFields patch, the apply) with each fault: the
// pass reports it, and the next fault-free passes converge on the changed object with
// the field manager's Apply entry and no create entry left.
func TestCreateAndTakeOverFaultMatrix(t *testing.T) {
	faults.Matrix{
		Setup: func(t *testing.T) faults.Scenario {
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			created := false
			return faults.Scenario{
				Client: env.Client,
				Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
					desired := desiredConfigMap(ns)
					if created {
						desired.Data = map[string]string{"other": "v2"}
					}
					if err := apply.EnsureObject(ctx, direct(c), env.Scheme, owner, desired, apply.FieldManager); err != nil {
						return ctrl.Result{}, err
					}
					if !created {
						created = true
						return ctrl.Result{RequeueAfter: time.Millisecond}, nil
					}
					return ctrl.Result{}, nil
				},
				State: func(t *testing.T) any {
					return childState(t, ns, owner, func(cm *corev1.ConfigMap) map[string]any {
						_, createEntry := apply.CreatedEntry(cm, apply.FieldManager)
						return map[string]any{"applied": apply.AppliedBy(cm, apply.FieldManager), "createEntry": createEntry}
					})
				},
			}
		},
	}.Run(t)
}
