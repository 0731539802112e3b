package apply_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
)

// embedding is a caller's own wrapper: it embeds the Applier and counts the applies and
// creates it sends.
type embedding struct {
	*apply.Applier
	writes atomic.Int32
}

func (e *embedding) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	e.writes.Add(1)
	return e.Applier.Apply(ctx, obj, opts...)
}

func (e *embedding) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	e.writes.Add(1)
	return e.Applier.Create(ctx, obj, opts...)
}

// intercepted wraps a around an interceptor that counts the applies and creates it
// sends, carrying a's capabilities with apply.Wrap.
func intercepted(a *apply.Applier) (client.Client, *atomic.Int32) {
	var n atomic.Int32
	funcs := interceptor.Funcs{Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
		n.Add(1)
		return c.Apply(ctx, obj, opts...)
	}, Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		n.Add(1)
		return c.Create(ctx, obj, opts...)
	}}
	return apply.Wrap(interceptor.NewClient(withWatch{a}, funcs), a), &n
}

// withWatch lends an Applier the Watch method interceptor.NewClient requires; the
// tests never call it.
type withWatch struct{ *apply.Applier }

func (withWatch) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	panic("not used")
}

// TestWrappedApplierKeepsItsCapabilities: a client wrapping the Applier (an embedding
// struct, or an interceptor carried with Wrap) still writes under the operator's field
// manager, stamps the managed-by label, skips a converged apply and claims children with
// labels on a target cluster: the helpers find the Applier through apply.Capable.
func TestWrappedApplierKeepsItsCapabilities(t *testing.T) {
	tests := map[string]struct {
		reason string
		wrap   func(*apply.Applier) (client.Client, *atomic.Int32)
	}{
		"embedding": {
			reason: "a struct embedding *Applier carries it",
			wrap: func(a *apply.Applier) (client.Client, *atomic.Int32) {
				e := &embedding{Applier: a}
				return e, &e.writes
			},
		},
		"interceptor": {
			reason: "apply.Wrap makes an interceptor carry it",
			wrap:   intercepted,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			a, _ := cachedApplier(t, apply.ApplierOptions{FieldManager: "my-operator"})
			c, writesSent := tc.wrap(a)
			if got := apply.ApplierOf(c); got != a {
				t.Fatalf("%s: ApplierOf(wrapper) = %p, want the Applier %p", tc.reason, got, a)
			}
			if got := apply.FieldManagerFor(c); got != "my-operator" {
				t.Fatalf("%s: FieldManagerFor = %q, want my-operator", tc.reason, got)
			}

			cm := desiredConfigMap(ns)
			if err := apply.EnsureObject(ctx, c, env.Scheme, owner, cm, apply.FieldManager); err != nil {
				t.Fatal(err)
			}
			if writesSent.Load() != 1 {
				t.Fatalf("%s: the wrapper saw %d writes, want the create (writes go through the wrapper)", tc.reason, writesSent.Load())
			}
			var managers []string
			for _, mf := range cm.ManagedFields {
				managers = append(managers, mf.Manager)
			}
			if diff := cmp.Diff([]string{apply.CreateFieldManager("my-operator")}, managers); diff != "" {
				t.Errorf("%s: field managers (-want +got):\n%s", tc.reason, diff)
			}
			if got := cm.Labels[apply.ManagedByLabel]; got != "my-operator" {
				t.Errorf("%s: managed-by label = %q, want my-operator", tc.reason, got)
			}

			settle(ctx, t, a, owner, func() client.Object { return desiredConfigMap(ns) })
			before := writesSent.Load()
			ctx2, writes := apply.WithWrites(ctx)
			if err := apply.EnsureObject(ctx2, c, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
				t.Fatal(err)
			}
			if w := writes.All(); len(w) != 1 || w[0].Action != apply.ActionSkipped || writesSent.Load() != before {
				t.Errorf("%s: converged apply through the wrapper: writes %v, %d writes sent; want one Skipped and none sent",
					tc.reason, w, writesSent.Load()-before)
			}
		})
	}
}

// TestWrappedRemoteApplierClaims: through a wrapper of an Applier with Remote set, a
// child is claimed with labels and gets no owner reference.
func TestWrappedRemoteApplierClaims(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	a := apply.NewApplier(env.Client, apply.ApplierOptions{Remote: &apply.RemoteOwnership{ManagementCluster: "mgmt-a"}})
	c, _ := intercepted(a)
	cm := desiredConfigMap(ns)
	if err := apply.EnsureObject(ctx, c, env.Scheme, owner, cm, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if len(cm.OwnerReferences) != 0 {
		t.Errorf("owner references %v, want none on a target cluster", cm.OwnerReferences)
	}
	claim, ok := apply.ClaimOf(cm)
	if !ok || claim.Name != owner.Name || claim.ManagementCluster != "mgmt-a" {
		t.Errorf("claim = %+v, %v; want one for owner %s of mgmt-a", claim, ok, owner.Name)
	}
	if !apply.IsControlled(c, owner, cm) {
		t.Error("IsControlled through the wrapper = false, want true (the claim is read the Applier's way)")
	}
}

// TestPlainClientCarriesNoApplier: a client that carries no Applier gets the SDK's
// defaults, and Wrap over it returns the wrapper unchanged.
func TestPlainClientCarriesNoApplier(t *testing.T) {
	if got := apply.ApplierOf(env.Client); got != nil {
		t.Errorf("ApplierOf(plain client) = %p, want nil", got)
	}
	if got := apply.FieldManagerFor(env.Client); got != apply.FieldManager {
		t.Errorf("FieldManagerFor(plain client) = %q, want %q", got, apply.FieldManager)
	}
	if got := apply.Wrap(env.Client, env.Client); got != env.Client {
		t.Error("Wrap over a plain client changed the wrapper")
	}
}
