package database

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/credential"
)

// ProvisionParams are the desired mariadb-operator objects of [ReconcileProvision],
// built from scratch on every pass.
type ProvisionParams struct {
	// Database is the logical database. Its spec.mariaDbRef names the MariaDB server
	// the flow gates on (kind MariaDB; the namespace defaults to the Database's).
	Database *mariadbv1alpha1.Database
	// User is the database account. Its spec.passwordSecretKeyRef names the password
	// Secret (in the User's namespace) and is required. An empty spec.mariaDbRef is
	// taken from Database.
	User *mariadbv1alpha1.User
	// Grant gives User its privileges. An empty spec.mariaDbRef is taken from Database,
	// an empty spec.username from User and an empty spec.database is the Database's
	// name — not mariadb-operator's default "*", which would grant on every database.
	Grant *mariadbv1alpha1.Grant
	// GeneratePassword creates the password Secret when it does not exist, through
	// credential.Ensure: with the password of its backup when Restore finds one,
	// otherwise with a random password of [PasswordLength] characters. An existing
	// Secret is never written: the password is generated once and survives every later
	// pass. A Secret deleted later is created again the same way, and never silently
	// (see "Generated passwords" in the package documentation). When false, the Secret
	// comes from elsewhere (an ExternalSecret, the user) and the flow waits for it.
	GeneratePassword bool
	// Restore, with GeneratePassword, is asked for the password of a missing password
	// Secret before a new one is generated: the password its backup holds (the Secret
	// is created with it, and the account keeps its password), or a pending answer
	// while the backup may still deliver it (nothing is generated;
	// [ReasonPasswordRestorePending]). Nil: no backup exists. Setting it without
	// GeneratePassword is refused with [ErrInvalidParams].
	Restore credential.Restorer
	// Recorder records an Event on owner whenever the flow creates the password
	// Secret: credential.ReasonGenerated on a first install, credential.ReasonRestored
	// from a backup, and the Warning credential.ReasonRegenerated when the password was
	// lost while the User exists. The Events name the Secret and the User, never the
	// password. Nil records none; the flow logs every creation either way.
	Recorder events.EventRecorder
}

// ReconcileProvision is the database provisioning flow. It returns the
// [ConditionType] condition to set (without observedGeneration, which the caller
// stamps) and the result of the step:
//
//  1. The MariaDB server Database.spec.mariaDbRef names must exist
//     ([ReasonMariaDBNotFound]) and be Ready ([ReasonMariaDBNotReady]); nothing is
//     applied before.
//  2. The Database is applied ([EnsureDatabase]) and must be Ready
//     ([ReasonDatabaseNotReady]).
//  3. The password Secret the User references must hold a non-empty value under its
//     key and not be in deletion ([ReasonPasswordSecretNotReady]); with
//     GeneratePassword a missing Secret is created first — restored from
//     ProvisionParams.Restore's backup, or generated — unless that backup may still
//     deliver the password ([ReasonPasswordRestorePending]). An existing Secret is only
//     read, whoever controls it (an ExternalSecret, the user, the owner). The User
//     would fail without it, so it is settled before the User is applied.
//  4. The User and the Grant are applied ([EnsureDatabaseUser]); the User must be Ready
//     ([ReasonUserNotReady]), then the Grant ([ReasonGrantNotReady]).
//
// "Ready" means a Ready condition with status True for the object's current spec: one
// observed for an older generation counts as not ready (see [EnsureDatabase]), and so
// does a Grant whose recorded privileges are not the specified ones. Each not-ready
// state returns a False condition and ctrl.Result{RequeueAfter: [PollInterval]} with a
// nil error. When all is ready the condition is True with reason
// [ReasonDatabaseProvisioned] and the result is zero, so the pipeline moves on.
//
// Invalid parameters are refused with [ErrInvalidParams], and a nil scheme with an error
// wrapping apply.ErrNilScheme, before any API call; API failures return the zero
// Condition (no Type) and the error, so the caller keeps the condition it has. A
// Database, User or Grant the owner does not control is refused that way too (see the
// package documentation). Empty namespaces are taken from owner. The password never
// appears in a condition, an error, a log line or an Event.
func ReconcileProvision(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	p ProvisionParams,
) (metav1.Condition, ctrl.Result, error) {
	if err := p.complete(owner); err != nil {
		return metav1.Condition{}, ctrl.Result{}, fmt.Errorf("reconcile database provisioning: %w", err)
	}
	db, user, grant := p.Database, p.User, p.Grant
	if err := apply.CheckScheme(scheme); err != nil {
		return metav1.Condition{}, ctrl.Result{}, fmt.Errorf("reconcile database provisioning of Database %s: %w", keyOf(db), err)
	}

	// 1. The server.
	serverKey := mariaDBKey(db)
	server := &mariadbv1alpha1.MariaDB{}
	if err := c.Get(ctx, serverKey, server); err != nil {
		if apierrors.IsNotFound(err) {
			return notReady(ReasonMariaDBNotFound, fmt.Sprintf("MariaDB %s not found", serverKey))
		}
		return metav1.Condition{}, ctrl.Result{}, fmt.Errorf("reconcile database provisioning: get MariaDB %s: %w", serverKey, err)
	}
	if !isMariaDBReady(server) {
		return notReady(ReasonMariaDBNotReady,
			fmt.Sprintf("waiting for MariaDB %s: %s", serverKey, readyDetail(server.Status.Conditions, server.Generation)))
	}

	// 2. The Database.
	ready, err := EnsureDatabase(ctx, c, scheme, owner, db)
	if err != nil {
		return metav1.Condition{}, ctrl.Result{}, fmt.Errorf("reconcile database provisioning: %w", err)
	}
	if !ready {
		return notReady(ReasonDatabaseNotReady,
			fmt.Sprintf("waiting for Database %s: %s", keyOf(db), readyDetail(db.Status.Conditions, db.Generation)))
	}

	// 3. The password Secret.
	ref := user.Spec.PasswordSecretKeyRef
	secretKey := client.ObjectKey{Namespace: user.Namespace, Name: ref.Name}
	pw, err := ensurePasswordSecret(ctx, c, scheme, owner, p)
	if err != nil {
		return metav1.Condition{}, ctrl.Result{}, fmt.Errorf("reconcile database provisioning: %w", err)
	}
	switch pw.state {
	case passwordPending:
		return notReady(ReasonPasswordRestorePending,
			fmt.Sprintf("waiting for the backup of password Secret %s of User %s: %s; "+
				"no new password is generated while the backup may still hold one", secretKey, keyOf(user), pw.pending))
	case passwordMissing:
		return notReady(ReasonPasswordSecretNotReady,
			fmt.Sprintf("waiting for password Secret %s of User %s", secretKey, keyOf(user)))
	case passwordGoing:
		return notReady(ReasonPasswordSecretNotReady,
			fmt.Sprintf("password Secret %s of User %s is being deleted", secretKey, keyOf(user)))
	case passwordNoKey:
		return notReady(ReasonPasswordSecretNotReady,
			fmt.Sprintf("password Secret %s of User %s has no value under key %q", secretKey, keyOf(user), ref.Key))
	}

	// 4. The User, then the Grant.
	if _, err := EnsureDatabaseUser(ctx, c, scheme, owner, user, grant); err != nil {
		return metav1.Condition{}, ctrl.Result{}, fmt.Errorf("reconcile database provisioning: %w", err)
	}
	if !isUserReady(user) {
		return notReady(ReasonUserNotReady,
			fmt.Sprintf("waiting for User %s: %s", keyOf(user), readyDetail(user.Status.Conditions, user.Generation)))
	}
	if !isGrantReady(grant) {
		return notReady(ReasonGrantNotReady,
			fmt.Sprintf("waiting for Grant %s: %s", keyOf(grant), grantDetail(grant)))
	}
	return metav1.Condition{
		Type: ConditionType, Status: metav1.ConditionTrue, Reason: ReasonDatabaseProvisioned,
		Message: fmt.Sprintf("Database %s, User %s and Grant %s are ready on MariaDB %s",
			keyOf(db), keyOf(user), keyOf(grant), serverKey),
	}, ctrl.Result{}, nil
}

// notReady is a not-ready outcome: a False condition and a requeue after PollInterval.
func notReady(reason, msg string) (metav1.Condition, ctrl.Result, error) {
	return metav1.Condition{Type: ConditionType, Status: metav1.ConditionFalse, Reason: reason, Message: msg},
		ctrl.Result{RequeueAfter: PollInterval}, nil
}

// mariaDBKey is the key of the MariaDB server db references.
func mariaDBKey(db *mariadbv1alpha1.Database) client.ObjectKey {
	ns := db.Spec.MariaDBRef.Namespace
	if ns == "" {
		ns = db.Namespace
	}
	return client.ObjectKey{Namespace: ns, Name: db.Spec.MariaDBRef.Name}
}

// complete validates p and fills the fields documented on ProvisionParams.
func (p *ProvisionParams) complete(owner client.Object) error {
	switch {
	case isNil(owner):
		return apply.ErrNilOwner
	case p.Database == nil:
		return fmt.Errorf("%w: Database is nil", ErrInvalidParams)
	case p.User == nil:
		return fmt.Errorf("%w: User is nil", ErrInvalidParams)
	case p.Grant == nil:
		return fmt.Errorf("%w: Grant is nil", ErrInvalidParams)
	}
	db, user, grant := p.Database, p.User, p.Grant
	for _, obj := range []client.Object{db, user, grant} {
		if obj.GetNamespace() == "" {
			obj.SetNamespace(owner.GetNamespace())
		}
	}

	dbRef := &db.Spec.MariaDBRef
	switch {
	case dbRef.Name == "":
		return fmt.Errorf("%w: Database %s: spec.mariaDbRef.name is empty", ErrInvalidParams, keyOf(db))
	case dbRef.Kind != "" && dbRef.Kind != "MariaDB":
		return fmt.Errorf("%w: Database %s: spec.mariaDbRef.kind %q is not supported, the flow gates on a MariaDB",
			ErrInvalidParams, keyOf(db), dbRef.Kind)
	}
	server := mariaDBKey(db)
	for _, o := range []struct {
		desc string
		ref  *mariadbv1alpha1.MariaDBRef
		ns   string
	}{
		{"User " + keyOf(user), &user.Spec.MariaDBRef, user.Namespace},
		{"Grant " + keyOf(grant), &grant.Spec.MariaDBRef, grant.Namespace},
	} {
		if o.ref.Name == "" {
			*o.ref = *dbRef
			if o.ref.Namespace == "" && o.ns != server.Namespace {
				o.ref.Namespace = server.Namespace
			}
			continue
		}
		ns := o.ref.Namespace
		if ns == "" {
			ns = o.ns
		}
		if got := (client.ObjectKey{Namespace: ns, Name: o.ref.Name}); got != server {
			return fmt.Errorf("%w: %s: spec.mariaDbRef names MariaDB %s, Database %s names %s",
				ErrInvalidParams, o.desc, got, keyOf(db), server)
		}
	}

	ref := user.Spec.PasswordSecretKeyRef
	switch {
	case ref == nil || ref.Name == "":
		return fmt.Errorf("%w: User %s: spec.passwordSecretKeyRef.name is empty (without a password the account is locked)",
			ErrInvalidParams, keyOf(user))
	case ref.Key == "":
		return fmt.Errorf("%w: User %s: spec.passwordSecretKeyRef.key is empty", ErrInvalidParams, keyOf(user))
	}
	if errs := validation.IsConfigMapKey(ref.Key); len(errs) > 0 {
		return fmt.Errorf("%w: User %s: spec.passwordSecretKeyRef.key %q is not a valid Secret key: %s",
			ErrInvalidParams, keyOf(user), ref.Key, strings.Join(errs, "; "))
	}
	if p.Restore != nil && !p.GeneratePassword {
		return fmt.Errorf("%w: Restore is set but GeneratePassword is not: the flow creates no password Secret to restore",
			ErrInvalidParams)
	}

	username := user.UsernameOrDefault()
	switch {
	case grant.Spec.Username == "":
		grant.Spec.Username = username
	case grant.Spec.Username != username:
		return fmt.Errorf("%w: Grant %s: spec.username is %q, User %s is %q",
			ErrInvalidParams, keyOf(grant), grant.Spec.Username, keyOf(user), username)
	}
	if grant.Spec.Database == "" {
		grant.Spec.Database = db.DatabaseNameOrDefault()
	}
	if len(grant.Spec.Privileges) == 0 {
		return fmt.Errorf("%w: Grant %s: spec.privileges is empty", ErrInvalidParams, keyOf(grant))
	}
	return nil
}

// isNil reports whether v is nil or a typed nil pointer inside an interface.
func isNil(v client.Object) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
