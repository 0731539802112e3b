package database_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// operatorName is the field manager the Applier tests name the operator with.
const operatorName = "my-operator"

// provisionUntilReady runs the provisioning flow through c, marking each object Ready
// as the flow waits for it, until the flow reports the database provisioned.
func provisionUntilReady(ctx context.Context, t *testing.T, c client.Client, owner client.Object) {
	t.Helper()
	ns := owner.GetNamespace()
	eventually(t, "the provisioning flow to report ready", func(context.Context) (bool, string, error) {
		cond, _, err := database.ReconcileProvision(ctx, c, env.Scheme, owner, params(ns, true))
		if err != nil {
			return false, "", err
		}
		switch cond.Reason {
		case database.ReasonDatabaseNotReady:
			_, err = simulate.MarkDatabaseReady(ctx, env.Client, objectKey(ns, "identity"))
		case database.ReasonUserNotReady:
			_, err = simulate.MarkUserReady(ctx, env.Client, objectKey(ns, "identity"))
		case database.ReasonGrantNotReady:
			_, err = simulate.MarkGrantReady(ctx, env.Client, objectKey(ns, "identity"))
		}
		return cond.Status == metav1.ConditionTrue, cond.Reason + ": " + cond.Message, err
	})
}

// TestConvergedPassThroughApplierSendsNothing: the provisioning flow through an Applier
// over a manager's cache creates the Database, the password Secret, the User and the
// Grant once each; once all are ready and the informers have caught up, a pass sends
// no request at all, and with Secrets read past the cache exactly one GET.
func TestConvergedPassThroughApplierSendsNothing(t *testing.T) {
	cases := map[string]struct {
		uncached []client.Object
		gets     int
	}{
		"Secrets cached":   {gets: 0},
		"Secrets uncached": {uncached: []client.Object{&corev1.Secret{}}, gets: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			need(t)(simulate.MarkMariaDBReady(context.Background(), env.Client, newMariaDB(t, ns)))
			a, counter := env.StartApplier(t, ns, operatorName, tc.uncached...)

			ctx, writes := apply.WithWrites(context.Background())
			provisionUntilReady(ctx, t, a, owner)
			want := []string{
				"Database " + ns + "/identity created",
				"Secret " + ns + "/" + passwordSecret + " created",
				"User " + ns + "/identity created",
				"Grant " + ns + "/identity created",
			}
			if diff := cmp.Diff(want, testenv.WriteStrings(writes.Changed())); diff != "" {
				t.Errorf("writes up to ready (-want +got):\n%s", diff)
			}
			testenv.ExpectQuiet(t, counter, tc.gets, func(ctx context.Context) error {
				cond, res, err := database.ReconcileProvision(ctx, a, env.Scheme, owner, params(ns, true))
				if err == nil && (cond.Status != metav1.ConditionTrue || !res.IsZero()) {
					t.Errorf("converged pass = %s (%s), %+v; want True and a zero result", cond.Reason, cond.Message, res)
				}
				return err
			})
		})
	}
}

// TestPasswordSecretReadPastAStaleCache: when the read misses a password Secret that
// exists (a cache that has not seen it yet), the create meets AlreadyExists and the
// Secret is read past the cache: the flow goes on with it, no error, nothing recorded.
func TestPasswordSecretReadPastAStaleCache(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	need(t)(simulate.MarkMariaDBReady(ctx, env.Client, newMariaDB(t, ns)))
	settle(ctx, t, owner, false)
	need(t)(simulate.MarkDatabaseReady(ctx, env.Client, objectKey(ns, "identity")))
	if _, _, err := provision(ctx, t, env.Client, owner, true); err != nil {
		t.Fatal(err)
	}
	stored := &corev1.Secret{}
	if err := env.Client.Get(ctx, objectKey(ns, passwordSecret), stored); err != nil {
		t.Fatal(err)
	}
	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	stale := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, typed := obj.(*corev1.Secret); typed {
				return apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, key.Name)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	ctx, writes := apply.WithWrites(ctx)
	cond, _, err := provision(ctx, t, stale, owner, true)
	if err != nil || cond.Reason != database.ReasonUserNotReady {
		t.Fatalf("pass past a stale cache = %s (%s), %v; want %s", cond.Reason, cond.Message, err, database.ReasonUserNotReady)
	}
	if got := writes.Changed(); len(got) != 0 {
		t.Errorf("recorded %v, want no change", got)
	}
	now := &corev1.Secret{}
	if err := env.Client.Get(ctx, objectKey(ns, passwordSecret), now); err != nil {
		t.Fatal(err)
	}
	if now.ResourceVersion != stored.ResourceVersion {
		t.Errorf("the password Secret changed (rv %s -> %s)", stored.ResourceVersion, now.ResourceVersion)
	}
}

// TestProvisionThroughApplierWritesUnderTheOperatorsName: the objects the flow applies
// and the password Secret it creates through an Applier carry the operator's field
// manager.
func TestProvisionThroughApplierWritesUnderTheOperatorsName(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	need(t)(simulate.MarkMariaDBReady(ctx, env.Client, newMariaDB(t, ns)))
	a := apply.NewApplier(env.Client, apply.ApplierOptions{FieldManager: operatorName})
	provisionUntilReady(ctx, t, a, owner)

	for _, obj := range []client.Object{&mariadbv1alpha1.Database{}, &mariadbv1alpha1.User{}, &mariadbv1alpha1.Grant{}} {
		if err := env.Client.Get(ctx, objectKey(ns, "identity"), obj); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{apply.CreateFieldManager(operatorName) + "/Update"}, testenv.FieldManagers(obj)); diff != "" {
			t.Errorf("managers of %T (-want +got):\n%s", obj, diff)
		}
	}
	secret := &corev1.Secret{}
	if err := env.Client.Get(ctx, objectKey(ns, passwordSecret), secret); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{operatorName + "/Update"}, testenv.FieldManagers(secret)); diff != "" {
		t.Errorf("managers of the password Secret (-want +got):\n%s", diff)
	}
}
