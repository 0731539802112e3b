package faults_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// TestInjectorKeepsTheApplier: an Injector around a counted Applier (one built over
// testenv.CountingClient) answers apply.ApplierOf with that Applier, so EnsureObject
// through it writes under the Applier's field manager, records ownership the Applier's
// way and skips a converged apply; every call still goes through the injector (an
// armed fault fires) and through the counter.
func TestInjectorKeepsTheApplier(t *testing.T) {
	tests := map[string]struct {
		opts apply.ApplierOptions
		// claimed: the child carries claim labels instead of an owner reference.
		claimed bool
	}{
		"owner reference": {opts: apply.ApplierOptions{FieldManager: "faults-test"}},
		"claim labels": {
			opts:    apply.ApplierOptions{FieldManager: "faults-test", Remote: &apply.RemoteOwnership{ManagementCluster: "mgmt-a"}},
			claimed: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
			if err := env.Client.Create(ctx, owner); err != nil {
				t.Fatal(err)
			}
			counted, counter, err := env.CountingClient()
			if err != nil {
				t.Fatal(err)
			}
			a := apply.NewApplier(counted, tc.opts)
			inj := faults.NewInjector()
			c := inj.Client(a)
			if got := apply.ApplierOf(c); got != a {
				t.Fatalf("ApplierOf(injected) = %p, want the Applier %p", got, a)
			}
			if got := apply.FieldManagerFor(c); got != "faults-test" {
				t.Fatalf("FieldManagerFor(injected) = %q, want faults-test", got)
			}

			cm := child(ns, "v1")
			if err := apply.EnsureObject(ctx, c, env.Scheme, owner, cm, apply.FieldManager); err != nil {
				t.Fatal(err)
			}
			if n := inj.Calls(faults.VerbCreate); n != 1 {
				t.Errorf("the injector saw %d creates, want 1", n)
			}
			if n := counter.Method(http.MethodPost); n != 1 {
				t.Errorf("the counter saw %d POST requests, want 1", n)
			}
			if diff := cmp.Diff([]string{"faults-test-create/Update"}, testenv.FieldManagers(cm)); diff != "" {
				t.Errorf("field managers (-want +got):\n%s", diff)
			}
			_, claimed := apply.ClaimOf(cm)
			if claimed != tc.claimed || (len(cm.OwnerReferences) == 0) != tc.claimed {
				t.Errorf("claim labels %v, owner references %v; want claimed = %v", claimed, cm.OwnerReferences, tc.claimed)
			}

			counter.Reset()
			wctx, writes := apply.WithWrites(ctx)
			if err := apply.EnsureObject(wctx, c, env.Scheme, owner, child(ns, "v1"), apply.FieldManager); err != nil {
				t.Fatal(err)
			}
			if w := writes.All(); len(w) != 1 || w[0].Action != apply.ActionSkipped || counter.Writes() != 0 {
				t.Errorf("converged apply: writes %v, %d write requests; want one Skipped and none", w, counter.Writes())
			}

			inj.Arm(faults.VerbApply, 1, faults.Internal)
			err = apply.EnsureObject(ctx, c, env.Scheme, owner, child(ns, "v2"), apply.FieldManager)
			if !errors.Is(err, faults.ErrInjected) || !inj.Fired() {
				t.Errorf("armed Apply: err %v, fired %v; want the injected fault", err, inj.Fired())
			}
			got := &corev1.ConfigMap{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
				t.Fatal(err)
			}
			if got.Data["key"] != "v1" {
				t.Errorf("data after the failed apply = %v, want key=v1 (the fault is not served)", got.Data)
			}
		})
	}
}

// TestInjectorOverAPlainClient: a client that carries no Applier stays without one.
func TestInjectorOverAPlainClient(t *testing.T) {
	if a := apply.ApplierOf(faults.NewInjector().Client(env.Client)); a != nil {
		t.Errorf("ApplierOf(injected plain client) = %p, want nil", a)
	}
}

// child is the ConfigMap the tests apply, with data key=value.
func child(ns, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns},
		Data:       map[string]string{"key": value},
	}
}
