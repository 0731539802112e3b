package database_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// Stale readiness: a Ready=True condition observed for an older generation than the
// object's spec describes the old spec. These tests change the spec after the Ready
// condition was written and expect not-ready until mariadb-operator (its simulator)
// reports on the new generation.

// TestEnsureDatabaseStaleReadyIsNotReady: after a spec change the Database's old
// Ready=True does not count.
func TestEnsureDatabaseStaleReadyIsNotReady(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	if _, err := database.EnsureDatabase(ctx, env.Client, env.Scheme, owner, desiredDatabase(ns)); err != nil {
		t.Fatal(err)
	}
	need(t)(simulate.MarkDatabaseReady(ctx, env.Client, objectKey(ns, "identity")))

	changed := desiredDatabase(ns)
	changed.Spec.CleanupPolicy = new(mariadbv1alpha1.CleanupPolicySkip)
	ready, err := database.EnsureDatabase(ctx, env.Client, env.Scheme, owner, changed)
	if err != nil || ready {
		t.Fatalf("after a spec change: ready=%v err=%v, want (false, nil) while Ready is for generation %d and the spec is at %d",
			ready, err, readyGeneration(changed.Status.Conditions), changed.Generation)
	}

	need(t)(simulate.MarkDatabaseReady(ctx, env.Client, objectKey(ns, "identity")))
	again := desiredDatabase(ns)
	again.Spec.CleanupPolicy = new(mariadbv1alpha1.CleanupPolicySkip)
	if ready, err := database.EnsureDatabase(ctx, env.Client, env.Scheme, owner, again); err != nil || !ready {
		t.Fatalf("after the operator observed the new spec: ready=%v err=%v, want (true, nil)", ready, err)
	}
}

// TestEnsureDatabaseUserStaleReadyIsNotReady: after a spec change of the User, or of
// the Grant, the old Ready=True of the changed object does not count.
func TestEnsureDatabaseUserStaleReadyIsNotReady(t *testing.T) {
	tests := map[string]func(u *mariadbv1alpha1.User, g *mariadbv1alpha1.Grant){
		"User changed":  func(u *mariadbv1alpha1.User, _ *mariadbv1alpha1.Grant) { u.Spec.MaxUserConnections = 20 },
		"Grant changed": func(_ *mariadbv1alpha1.User, g *mariadbv1alpha1.Grant) { g.Spec.GrantOption = true },
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			if _, err := database.EnsureDatabaseUser(ctx, env.Client, env.Scheme, owner, desiredUser(ns), desiredGrant(ns)); err != nil {
				t.Fatal(err)
			}
			markUserAndGrantReady := func() {
				need(t)(simulate.MarkUserReady(ctx, env.Client, objectKey(ns, "identity")))
				need(t)(simulate.MarkGrantReady(ctx, env.Client, objectKey(ns, "identity")))
			}
			markUserAndGrantReady()

			user, grant := desiredUser(ns), desiredGrant(ns)
			change(user, grant)
			ready, err := database.EnsureDatabaseUser(ctx, env.Client, env.Scheme, owner, user, grant)
			if err != nil || ready {
				t.Fatalf("after a spec change: ready=%v err=%v, want (false, nil): User generation %d observed %d, Grant generation %d observed %d",
					ready, err, user.Generation, readyGeneration(user.Status.Conditions),
					grant.Generation, readyGeneration(grant.Status.Conditions))
			}

			markUserAndGrantReady()
			user, grant = desiredUser(ns), desiredGrant(ns)
			change(user, grant)
			if ready, err := database.EnsureDatabaseUser(ctx, env.Client, env.Scheme, owner, user, grant); err != nil || !ready {
				t.Fatalf("after the operator observed the new spec: ready=%v err=%v, want (true, nil)", ready, err)
			}
		})
	}
}

// TestEnsureDatabaseUserGrantPrivilegesNotYetGranted: mariadb-operator v25 leaves
// observedGeneration unset on its conditions, but records the privileges it granted in
// status.currentPrivileges. A Grant whose spec.privileges changed is not ready while
// the recorded privileges are the old ones, even with Ready=True.
func TestEnsureDatabaseUserGrantPrivilegesNotYetGranted(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	user, grant := desiredUser(ns), desiredGrant(ns)
	grant.Spec.Privileges = []string{"SELECT"}
	if _, err := database.EnsureDatabaseUser(ctx, env.Client, env.Scheme, owner, user, grant); err != nil {
		t.Fatal(err)
	}
	need(t)(simulate.MarkUserReady(ctx, env.Client, objectKey(ns, "identity")))
	// What mariadb-operator writes: Ready=True without observedGeneration and the
	// privileges it granted.
	setOperatorStatus(t, &mariadbv1alpha1.Grant{}, objectKey(ns, "identity"), func(o client.Object) {
		g := o.(*mariadbv1alpha1.Grant)
		g.Status.CurrentPrivileges = []string{"SELECT"}
		meta.SetStatusCondition(&g.Status.Conditions, metav1.Condition{Type: mariadbv1alpha1.ConditionTypeReady,
			Status: metav1.ConditionTrue, Reason: mariadbv1alpha1.ConditionReasonCreated, Message: "Created"})
	})
	if ready, err := database.EnsureDatabaseUser(ctx, env.Client, env.Scheme, owner, desiredUser(ns), withPrivileges(desiredGrant(ns), "SELECT")); err != nil || !ready {
		t.Fatalf("granted as specified: ready=%v err=%v, want (true, nil)", ready, err)
	}

	ready, err := database.EnsureDatabaseUser(ctx, env.Client, env.Scheme, owner, desiredUser(ns), withPrivileges(desiredGrant(ns), "SELECT", "INSERT"))
	if err != nil || ready {
		t.Fatalf("privileges changed, old ones recorded: ready=%v err=%v, want (false, nil)", ready, err)
	}

	setOperatorStatus(t, &mariadbv1alpha1.Grant{}, objectKey(ns, "identity"), func(o client.Object) {
		o.(*mariadbv1alpha1.Grant).Status.CurrentPrivileges = []string{"SELECT", "INSERT"}
	})
	if ready, err := database.EnsureDatabaseUser(ctx, env.Client, env.Scheme, owner, desiredUser(ns), withPrivileges(desiredGrant(ns), "SELECT", "INSERT")); err != nil || !ready {
		t.Fatalf("new privileges granted: ready=%v err=%v, want (true, nil)", ready, err)
	}
}

// TestReconcileProvisionStaleReadiness: every gate of the flow answers not-ready, with
// its documented reason, when the Ready=True it reads is older than the spec.
func TestReconcileProvisionStaleReadiness(t *testing.T) {
	notReady := ctrl.Result{RequeueAfter: database.PollInterval}
	tests := map[string]struct {
		// stale makes one Ready=True condition older than its object's spec.
		stale  func(ctx context.Context, t *testing.T, ns string)
		mutate func(p *database.ProvisionParams)
		want   metav1.Condition
	}{
		"MariaDB": {
			stale: func(ctx context.Context, t *testing.T, ns string) {
				bumpGeneration(t, &mariadbv1alpha1.MariaDB{}, objectKey(ns, "mariadb"), func(o client.Object) {
					o.(*mariadbv1alpha1.MariaDB).Spec.Image = "mariadb:11.8"
				})
			},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: database.ReasonMariaDBNotReady,
				Message: "waiting for MariaDB %s/mariadb: Ready=True (StatefulSetReady) was observed at generation 1, the spec is at generation 2"},
		},
		"Database": {
			mutate: func(p *database.ProvisionParams) {
				p.Database.Spec.CleanupPolicy = new(mariadbv1alpha1.CleanupPolicySkip)
			},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: database.ReasonDatabaseNotReady,
				Message: "waiting for Database %s/identity: Ready=True (Created) was observed at generation 1, the spec is at generation 2"},
		},
		"User": {
			mutate: func(p *database.ProvisionParams) { p.User.Spec.MaxUserConnections = 20 },
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: database.ReasonUserNotReady,
				Message: "waiting for User %s/identity: Ready=True (Created) was observed at generation 1, the spec is at generation 2"},
		},
		"Grant": {
			mutate: func(p *database.ProvisionParams) { p.Grant.Spec.GrantOption = true },
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: database.ReasonGrantNotReady,
				Message: "waiting for Grant %s/identity: Ready=True (Created) was observed at generation 1, the spec is at generation 2"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			markAllReady(ctx, t, ns, owner)
			if tc.stale != nil {
				tc.stale(ctx, t, ns)
			}
			p := params(ns, true)
			if tc.mutate != nil {
				tc.mutate(&p)
			}
			cond, res, err := database.ReconcileProvision(ctx, env.Client, env.Scheme, owner, p)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			want.Type = database.ConditionType
			want.Message = fmt.Sprintf(want.Message, ns)
			if diff := cmp.Diff(want, cond); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
			if res != notReady {
				t.Errorf("result = %+v, want %+v", res, notReady)
			}
		})
	}
}

// withPrivileges sets g's privileges and returns g.
func withPrivileges(g *mariadbv1alpha1.Grant, privileges ...string) *mariadbv1alpha1.Grant {
	g.Spec.Privileges = privileges
	return g
}

// readyGeneration is the observedGeneration of the Ready condition in conds, -1 without one.
func readyGeneration(conds []metav1.Condition) int64 {
	if c := meta.FindStatusCondition(conds, mariadbv1alpha1.ConditionTypeReady); c != nil {
		return c.ObservedGeneration
	}
	return -1
}

// bumpGeneration changes the spec of the object at k (into obj) with change, which
// moves its generation, and leaves its status as it was.
func bumpGeneration(t *testing.T, obj client.Object, k client.ObjectKey, change func(client.Object)) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Get(ctx, k, obj); err != nil {
		t.Fatal(err)
	}
	before := obj.GetGeneration()
	change(obj)
	if err := env.Client.Update(ctx, obj); err != nil {
		t.Fatal(err)
	}
	if obj.GetGeneration() == before {
		t.Fatalf("%s: generation did not move (%d)", k, before)
	}
}

// setOperatorStatus writes the status of the object at k (read into obj) as change
// leaves it, as mariadb-operator would.
func setOperatorStatus(t *testing.T, obj client.Object, k client.ObjectKey, change func(client.Object)) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Get(ctx, k, obj); err != nil {
		t.Fatal(err)
	}
	change(obj)
	if err := env.Client.Status().Update(ctx, obj); err != nil {
		t.Fatal(err)
	}
}
