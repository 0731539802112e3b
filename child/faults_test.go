package child_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/child"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// notOurs creates an unowned and another owner's child in ns and returns a check that
// both are still there, unwritten.
func notOurs(t *testing.T, ns string, owner client.Object) func(t *testing.T) {
	t.Helper()
	before := []*corev1.ConfigMap{
		existing{}.create(t, ns, "unowned", owner),
		existing{controller: "other"}.create(t, ns, "foreign", owner),
	}
	return func(t *testing.T) {
		t.Helper()
		for _, b := range before {
			untouched(t, b)
		}
	}
}

// sameChild returns a check that the owner's child at ns/name, once seen, is never
// replaced by another object of that name; gone tells whether it may disappear.
func sameChild(ns, name string, mayGo bool) func(t *testing.T) {
	var uid string
	return func(t *testing.T) {
		t.Helper()
		now := &corev1.ConfigMap{}
		switch err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, now); {
		case apierrors.IsNotFound(err):
			if uid != "" && !mayGo {
				t.Errorf("the owner's child %s was deleted", name)
			}
		case err != nil:
			t.Fatal(err)
		case uid == "":
			uid = string(now.UID)
		case uid != string(now.UID):
			t.Errorf("the owner's child %s was re-created", name)
		}
	}
}

// TestReconcileFaults runs the single form with every API call it makes failing once
// (Get and Apply when the child is wanted, Get and Delete when it is not): objects that
// are not the owner's are never touched, the owner's child is never re-created, and
// every run converges to the state of the run without a fault.
func TestReconcileFaults(t *testing.T) {
	for name, wanted := range map[string]bool{"wanted": true, "no longer wanted": false} {
		t.Run(name, func(t *testing.T) {
			faults.Matrix{Setup: func(t *testing.T) faults.Scenario {
				ns := env.Namespace(t)
				owner := newOwner(t, ns, "owner")
				others := notOurs(t, ns, owner)
				if !wanted {
					existing{controller: "owner"}.create(t, ns, "child", owner)
				}
				same := sameChild(ns, "child", !wanted)
				return faults.Scenario{
					Client: env.Client,
					Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
						var desired *corev1.ConfigMap
						if wanted {
							desired = configMap(ns, "child", "ours")
						}
						out, err := child.Reconcile(ctx, c, env.Scheme, owner, optional(ns, desired))
						if err != nil && out.Condition.Type != "" {
							t.Errorf("condition %+v with an error; the descriptor has no failure reason", out.Condition)
						}
						return out.Result, err
					},
					Check: func(t *testing.T) { others(t); same(t) },
					State: func(t *testing.T) any { return children(t, ns) },
				}
			}}.RunWritesAndReads(t)
		})
	}
}

// TestReconcileSetFaults runs the set form with every API call failing once: Get and
// Apply per desired child, the List of its prune and the Delete of the owner's child
// no longer wanted.
func TestReconcileSetFaults(t *testing.T) {
	faults.Matrix{Setup: func(t *testing.T) faults.Scenario {
		ns := env.Namespace(t)
		owner := newOwner(t, ns, "owner")
		others := notOurs(t, ns, owner)
		existing{controller: "owner"}.create(t, ns, "old", owner)
		same := sameChild(ns, "web", false)
		return faults.Scenario{
			Client: env.Client,
			Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
				s := set(configMap(ns, "web", "ours"))
				s.Failed = "ChildError"
				out, err := child.ReconcileSet(ctx, c, env.Scheme, owner, s)
				if err != nil && out.Condition.Reason != "ChildError" {
					t.Errorf("error %v with condition %+v, want reason ChildError", err, out.Condition)
				}
				return out.Result, err
			},
			Check: func(t *testing.T) { others(t); same(t) },
			State: func(t *testing.T) any { return children(t, ns) },
		}
	}}.RunWritesAndReads(t)
}
