package database_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

func TestEnsureDatabase(t *testing.T) {
	tests := map[string]struct {
		mark      func(ctx context.Context, c client.Client, key client.ObjectKey) error
		wantReady bool
	}{
		"no Ready condition yet": {wantReady: false},
		"Ready False": {
			mark: func(ctx context.Context, c client.Client, key client.ObjectKey) error {
				_, err := simulate.MarkDatabaseNotReady(ctx, c, key, "Failed", "Error creating database")
				return err
			},
			wantReady: false,
		},
		"Ready True": {
			mark: func(ctx context.Context, c client.Client, key client.ObjectKey) error {
				_, err := simulate.MarkDatabaseReady(ctx, c, key)
				return err
			},
			wantReady: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)

			db := desiredDatabase(ns)
			ready, err := database.EnsureDatabase(ctx, env.Client, env.Scheme, owner, db)
			if err != nil || ready {
				t.Fatalf("first apply: ready=%v err=%v, want (false, nil)", ready, err)
			}
			if ref := metav1.GetControllerOf(db); ref == nil || ref.UID != owner.UID {
				t.Fatalf("controller reference = %+v, want owner %s", ref, owner.UID)
			}
			if db.Spec.CharacterSet != "utf8" || db.Spec.Collate != "utf8_general_ci" {
				t.Errorf("server defaults not in the response: characterSet=%q collate=%q", db.Spec.CharacterSet, db.Spec.Collate)
			}
			if tc.mark != nil {
				if err := tc.mark(ctx, env.Client, key(db)); err != nil {
					t.Fatal(err)
				}
			}
			before := &mariadbv1alpha1.Database{}
			if err := env.Client.Get(ctx, key(db), before); err != nil {
				t.Fatal(err)
			}

			again := desiredDatabase(ns)
			ready, err = database.EnsureDatabase(ctx, env.Client, env.Scheme, owner, again)
			if err != nil || ready != tc.wantReady {
				t.Fatalf("converged apply: ready=%v err=%v, want (%v, nil)", ready, err, tc.wantReady)
			}
			if again.ResourceVersion != before.ResourceVersion {
				t.Errorf("converged apply moved resourceVersion %s -> %s", before.ResourceVersion, again.ResourceVersion)
			}
			if again.Spec.CharacterSet != "utf8" {
				t.Errorf("converged apply lost the server default characterSet: %q", again.Spec.CharacterSet)
			}
		})
	}
}

func TestEnsureDatabaseSpecChangeIsApplied(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	if _, err := database.EnsureDatabase(ctx, env.Client, env.Scheme, owner, desiredDatabase(ns)); err != nil {
		t.Fatal(err)
	}
	changed := desiredDatabase(ns)
	changed.Spec.CleanupPolicy = new(mariadbv1alpha1.CleanupPolicySkip)
	if _, err := database.EnsureDatabase(ctx, env.Client, env.Scheme, owner, changed); err != nil {
		t.Fatal(err)
	}
	got := &mariadbv1alpha1.Database{}
	if err := env.Client.Get(ctx, key(changed), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.CleanupPolicy == nil || *got.Spec.CleanupPolicy != mariadbv1alpha1.CleanupPolicySkip {
		t.Errorf("cleanupPolicy = %v, want Skip", got.Spec.CleanupPolicy)
	}
}

func TestEnsureDatabaseErrors(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)

	_, err := database.EnsureDatabase(ctx, env.Client, env.Scheme, owner, nil)
	if !errors.Is(err, apply.ErrNilObject) {
		t.Errorf("nil Database: err = %v, want apply.ErrNilObject", err)
	}

	invalid := desiredDatabase(ns)
	invalid.Spec.Name = strings.Repeat("x", 81) // the CRD allows at most 80
	ready, err := database.EnsureDatabase(ctx, env.Client, env.Scheme, owner, invalid)
	if ready || !apierrors.IsInvalid(err) {
		t.Fatalf("invalid Database: ready=%v err=%v, want an Invalid API error", ready, err)
	}
	if !strings.Contains(err.Error(), "Database "+ns+"/identity") {
		t.Errorf("error %q does not name the Database", err)
	}
}

func TestEnsureDatabaseUser(t *testing.T) {
	tests := map[string]struct {
		userReady, grantReady bool
		wantReady             bool
	}{
		"neither ready":    {},
		"only User ready":  {userReady: true},
		"only Grant ready": {grantReady: true},
		"both ready":       {userReady: true, grantReady: true, wantReady: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)

			user, grant := desiredUser(ns), desiredGrant(ns)
			ready, err := database.EnsureDatabaseUser(ctx, env.Client, env.Scheme, owner, user, grant)
			if err != nil || ready {
				t.Fatalf("first apply: ready=%v err=%v, want (false, nil)", ready, err)
			}
			for _, obj := range []client.Object{user, grant} {
				if ref := metav1.GetControllerOf(obj); ref == nil || ref.UID != owner.UID {
					t.Errorf("%T controller reference = %+v, want owner %s", obj, ref, owner.UID)
				}
			}
			if user.Spec.MaxUserConnections != 10 {
				t.Errorf("maxUserConnections = %d, want the server default 10", user.Spec.MaxUserConnections)
			}
			if tc.userReady {
				need(t)(simulate.MarkUserReady(ctx, env.Client, key(user)))
			} else {
				need(t)(simulate.MarkUserNotReady(ctx, env.Client, key(user), "Failed", "Error creating user"))
			}
			if tc.grantReady {
				need(t)(simulate.MarkGrantReady(ctx, env.Client, key(grant)))
			}
			userBefore, err := getUser(ctx, key(user))
			if err != nil {
				t.Fatal(err)
			}
			grantBefore, err := getGrant(ctx, key(grant))
			if err != nil {
				t.Fatal(err)
			}

			user2, grant2 := desiredUser(ns), desiredGrant(ns)
			ready, err = database.EnsureDatabaseUser(ctx, env.Client, env.Scheme, owner, user2, grant2)
			if err != nil || ready != tc.wantReady {
				t.Fatalf("converged apply: ready=%v err=%v, want (%v, nil)", ready, err, tc.wantReady)
			}
			if user2.ResourceVersion != userBefore.ResourceVersion || grant2.ResourceVersion != grantBefore.ResourceVersion {
				t.Errorf("converged apply moved resourceVersion: User %s -> %s, Grant %s -> %s",
					userBefore.ResourceVersion, user2.ResourceVersion, grantBefore.ResourceVersion, grant2.ResourceVersion)
			}
			if user2.Spec.MaxUserConnections != 10 {
				t.Errorf("converged apply lost the server default maxUserConnections: %d", user2.Spec.MaxUserConnections)
			}
		})
	}
}

// TestEnsureDatabaseUserUserFirst proves the order: a User the API server rejects stops
// the call before the Grant is written, and a nil Grant is refused before the User is.
func TestEnsureDatabaseUserUserFirst(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)

	user := desiredUser(ns)
	user.Spec.Name = strings.Repeat("u", 81) // the CRD allows at most 80
	ready, err := database.EnsureDatabaseUser(ctx, env.Client, env.Scheme, owner, user, desiredGrant(ns))
	if ready || !apierrors.IsInvalid(err) {
		t.Fatalf("invalid User: ready=%v err=%v, want an Invalid API error", ready, err)
	}
	if _, err := getGrant(ctx, client.ObjectKey{Namespace: ns, Name: "identity"}); !apierrors.IsNotFound(err) {
		t.Errorf("Grant after a failed User: err = %v, want NotFound (not attempted)", err)
	}

	ready, err = database.EnsureDatabaseUser(ctx, env.Client, env.Scheme, owner, desiredUser(ns), nil)
	if ready || !errors.Is(err, apply.ErrNilObject) || !strings.Contains(err.Error(), "Grant") {
		t.Fatalf("nil Grant: ready=%v err=%v, want apply.ErrNilObject naming the Grant", ready, err)
	}
	if _, err := getUser(ctx, client.ObjectKey{Namespace: ns, Name: "identity"}); !apierrors.IsNotFound(err) {
		t.Errorf("User after a nil Grant: err = %v, want NotFound (nothing written)", err)
	}
	if _, err := database.EnsureDatabaseUser(ctx, env.Client, env.Scheme, owner, nil, desiredGrant(ns)); !errors.Is(err, apply.ErrNilObject) {
		t.Errorf("nil User: err = %v, want apply.ErrNilObject", err)
	}

	grant := desiredGrant(ns)
	grant.Spec.Privileges = nil // the CRD requires at least one
	_, err = database.EnsureDatabaseUser(ctx, env.Client, env.Scheme, owner, desiredUser(ns), grant)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "Grant "+ns+"/identity") {
		t.Errorf("invalid Grant: err = %v, want an Invalid API error naming the Grant", err)
	}
}

func getUser(ctx context.Context, k client.ObjectKey) (*mariadbv1alpha1.User, error) {
	u := &mariadbv1alpha1.User{}
	return u, env.Client.Get(ctx, k, u)
}

func getGrant(ctx context.Context, k client.ObjectKey) (*mariadbv1alpha1.Grant, error) {
	g := &mariadbv1alpha1.Grant{}
	return g, env.Client.Get(ctx, k, g)
}
