package database

import (
	"context"
	"fmt"
	"slices"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// EnsureDatabase creates or updates the MariaDB Database CR db, controlled by owner.
//
// It returns (true, nil) when the Database has a Ready condition with status True for
// its current spec, (false, nil) when it exists but is not yet ready and (false, err) on
// failure. A Ready condition observed for an older generation (observedGeneration below
// metadata.generation) is not ready: it describes the spec before the last change. A
// Ready condition without observedGeneration is taken at face value; see the package
// documentation on readiness.
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
	if db == nil {
		return false, fmt.Errorf("ensure Database: %w", apply.ErrNilObject)
	}
	if err := apply.CheckScheme(scheme); err != nil {
		return false, fmt.Errorf("ensure Database %s: %w", keyOf(db), err)
	}
	if err := apply.EnsureObject(ctx, c, scheme, owner, db, apply.FieldManager); err != nil {
		return false, fmt.Errorf("ensure Database: %w", err)
	}
	return isDatabaseReady(db), nil
}

// EnsureDatabaseUser creates or updates the MariaDB User CR user and the Grant CR grant
// in a single call, both controlled by owner.
//
// It returns (true, nil) when both the User and the Grant have a Ready condition with
// status True for their current spec, (false, nil) when either is not yet ready and
// (false, err) on failure. Readiness follows [EnsureDatabase]'s rule; a Grant is also
// not ready while the privileges mariadb-operator recorded as granted
// (status.currentPrivileges) differ from spec.privileges.
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
	if err := apply.CheckScheme(scheme); err != nil {
		return false, fmt.Errorf("ensure database User %s and Grant %s: %w", keyOf(user), keyOf(grant), err)
	}
	if err := apply.EnsureObject(ctx, c, scheme, owner, user, apply.FieldManager); err != nil {
		return false, fmt.Errorf("ensure database user: %w", err)
	}
	if err := apply.EnsureObject(ctx, c, scheme, owner, grant, apply.FieldManager); err != nil {
		return false, fmt.Errorf("ensure database user grant: %w", err)
	}
	return isUserReady(user) && isGrantReady(grant), nil
}

// isMariaDBReady reports whether the MariaDB server is ready for its current spec
// (see readyFor).
func isMariaDBReady(server *mariadbv1alpha1.MariaDB) bool {
	return readyFor(server.Status.Conditions, server.Generation)
}

// isDatabaseReady reports whether db is ready for its current spec (see readyFor).
func isDatabaseReady(db *mariadbv1alpha1.Database) bool {
	return readyFor(db.Status.Conditions, db.Generation)
}

// isUserReady reports whether user is ready for its current spec (see readyFor).
func isUserReady(user *mariadbv1alpha1.User) bool {
	return readyFor(user.Status.Conditions, user.Generation)
}

// isGrantReady reports whether grant is ready for its current spec: readyFor, and the
// privileges mariadb-operator recorded as granted (status.currentPrivileges) are the
// ones spec.privileges asks for. An unset currentPrivileges is not held against it.
func isGrantReady(grant *mariadbv1alpha1.Grant) bool {
	return readyFor(grant.Status.Conditions, grant.Generation) && privilegesGranted(grant)
}

// privilegesGranted reports whether grant's recorded privileges, when recorded, equal
// spec.privileges. mariadb-operator records them, in spec order, after it ran GRANT
// for them.
func privilegesGranted(grant *mariadbv1alpha1.Grant) bool {
	return grant.Status.CurrentPrivileges == nil || slices.Equal(grant.Status.CurrentPrivileges, grant.Spec.Privileges)
}

// readyFor reports whether conds hold a Ready condition with status True that was
// observed for generation: a condition observed for an older generation describes an
// older spec and does not count. mariadb-operator v25 does not set observedGeneration
// on its conditions; a condition without it (0) cannot be dated and is taken at face
// value.
func readyFor(conds []metav1.Condition, generation int64) bool {
	cond := meta.FindStatusCondition(conds, mariadbv1alpha1.ConditionTypeReady)
	return cond != nil && cond.Status == metav1.ConditionTrue && !stale(cond, generation)
}

// stale reports whether cond was observed for a generation older than generation.
func stale(cond *metav1.Condition, generation int64) bool {
	return cond.ObservedGeneration != 0 && cond.ObservedGeneration < generation
}

// readyDetail describes why conds hold no Ready=True for generation, for a condition
// message: the reason and message mariadb-operator left on the Ready condition, that
// it describes an older generation, or that there is none yet.
func readyDetail(conds []metav1.Condition, generation int64) string {
	cond := meta.FindStatusCondition(conds, mariadbv1alpha1.ConditionTypeReady)
	switch {
	case cond == nil:
		return "no Ready condition yet"
	case stale(cond, generation):
		return fmt.Sprintf("Ready=%s (%s) was observed at generation %d, the spec is at generation %d",
			cond.Status, cond.Reason, cond.ObservedGeneration, generation)
	case cond.Message == "":
		return fmt.Sprintf("Ready=%s (%s)", cond.Status, cond.Reason)
	default:
		return fmt.Sprintf("Ready=%s (%s): %s", cond.Status, cond.Reason, cond.Message)
	}
}

// grantDetail is readyDetail for a Grant, which is also not ready while the privileges
// recorded as granted differ from spec.privileges.
func grantDetail(grant *mariadbv1alpha1.Grant) string {
	if readyFor(grant.Status.Conditions, grant.Generation) && !privilegesGranted(grant) {
		return fmt.Sprintf("Ready=True, but the privileges granted are %v and spec.privileges asks for %v",
			grant.Status.CurrentPrivileges, grant.Spec.Privileges)
	}
	return readyDetail(grant.Status.Conditions, grant.Generation)
}

// keyOf names an object as namespace/name.
func keyOf(obj client.Object) string {
	return client.ObjectKeyFromObject(obj).String()
}
