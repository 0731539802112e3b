package database

import (
	"context"
	"fmt"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// EnsureDatabase creates or updates the MariaDB Database CR db, controlled by owner.
//
// It returns (true, nil) when the Database has a Ready condition with status True,
// (false, nil) when it exists but is not yet ready and (false, err) on failure.
//
// db is applied via [apply.EnsureObject] (Server-Side Apply under [apply.FieldManager]):
// the field manager owns only the fields the builder sets, so server defaults on
// omitted fields (characterSet, collate) are preserved and a converged Database is not
// rewritten. Readiness is read from the server's apply response, which is decoded back
// into db.
func EnsureDatabase(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	db *mariadbv1alpha1.Database,
) (bool, error) {
	if err := apply.EnsureObject(ctx, c, scheme, owner, db, apply.FieldManager); err != nil {
		return false, fmt.Errorf("ensure Database: %w", err)
	}
	return isDatabaseReady(db), nil
}

// EnsureDatabaseUser creates or updates the MariaDB User CR user and the Grant CR grant
// in a single call, both controlled by owner.
//
// It returns (true, nil) when both the User and the Grant have a Ready condition with
// status True, (false, nil) when either is not yet ready and (false, err) on failure.
//
// The User is applied first, then the Grant; when the User cannot be applied, the
// Grant is not attempted. Both are applied like [EnsureDatabase] applies a Database (a
// server default such as maxUserConnections on a User that leaves it unset is
// preserved), and both hold the server's copy on return.
func EnsureDatabaseUser(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	user *mariadbv1alpha1.User,
	grant *mariadbv1alpha1.Grant,
) (bool, error) {
	// Refuse a missing Grant before the User is written, so a call never half-applies.
	switch {
	case user == nil:
		return false, fmt.Errorf("ensure database user: User: %w", apply.ErrNilObject)
	case grant == nil:
		return false, fmt.Errorf("ensure database user %s: Grant: %w", keyOf(user), apply.ErrNilObject)
	}
	if err := apply.EnsureObject(ctx, c, scheme, owner, user, apply.FieldManager); err != nil {
		return false, fmt.Errorf("ensure database user: %w", err)
	}
	if err := apply.EnsureObject(ctx, c, scheme, owner, grant, apply.FieldManager); err != nil {
		return false, fmt.Errorf("ensure database user grant: %w", err)
	}
	return isUserReady(user) && isGrantReady(grant), nil
}

// isDatabaseReady reports whether db has a Ready condition with status True.
func isDatabaseReady(db *mariadbv1alpha1.Database) bool {
	return readyTrue(db.Status.Conditions)
}

// isUserReady reports whether user has a Ready condition with status True.
func isUserReady(user *mariadbv1alpha1.User) bool {
	return readyTrue(user.Status.Conditions)
}

// isGrantReady reports whether grant has a Ready condition with status True.
func isGrantReady(grant *mariadbv1alpha1.Grant) bool {
	return readyTrue(grant.Status.Conditions)
}

func readyTrue(conds []metav1.Condition) bool {
	return meta.IsStatusConditionTrue(conds, mariadbv1alpha1.ConditionTypeReady)
}

// readyDetail describes why conds hold no Ready=True, for a condition message: the
// reason and message mariadb-operator left on the Ready condition, or that there is
// none yet.
func readyDetail(conds []metav1.Condition) string {
	cond := meta.FindStatusCondition(conds, mariadbv1alpha1.ConditionTypeReady)
	if cond == nil {
		return "no Ready condition yet"
	}
	if cond.Message == "" {
		return fmt.Sprintf("Ready=%s (%s)", cond.Status, cond.Reason)
	}
	return fmt.Sprintf("Ready=%s (%s): %s", cond.Status, cond.Reason, cond.Message)
}

// keyOf names an object as namespace/name.
func keyOf(obj client.Object) string {
	return client.ObjectKeyFromObject(obj).String()
}
