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
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// ProvisionParams are the desired objects of [ProvisionFlow], built from scratch on
// every pass. Empty namespaces are the owner's.
type ProvisionParams struct {
	// Database is the logical database; its spec.mariaDbRef names the MariaDB server
	// (kind MariaDB; the namespace defaults to the Database's).
	Database *mariadbv1alpha1.Database
	// User is the account; its spec.passwordSecretKeyRef (required) names the password
	// Secret in the User's namespace. An empty spec.mariaDbRef is the Database's.
	User *mariadbv1alpha1.User
	// Grant gives User its privileges. Empty spec.mariaDbRef, spec.username and
	// spec.database are the Database's server, the User's name and the Database's name
	// (not mariadb-operator's "*", every database).
	Grant *mariadbv1alpha1.Grant
	// GeneratePassword creates a missing password Secret, once (see "Generated
	// passwords"); false waits for a Secret that comes from elsewhere.
	GeneratePassword bool
	// Restore, with GeneratePassword only, is asked for a missing password Secret's
	// backup before a new password is generated (see "Generated passwords").
	Restore credential.Restorer
	// Recorder records an Event on owner for every password Secret the flow creates;
	// nil records none (the creation is logged either way).
	Recorder events.EventRecorder
	// Connection, when set, has the flow write this connection Secret once everything
	// is ready ([EnsureConnectionSecret]) with the User's password. Empty Connection
	// fields are the MariaDB's Service (<name>-primary with HA) and port, the
	// Database's name and the User's account name.
	Connection *ConnectionSecretParams
}

// Provisioned is the answer of [ProvisionFlow].
type Provisioned struct {
	reconcile.Outcome
	// Connection is the connection Secret written, once provisioned with
	// ProvisionParams.Connection set; zero otherwise.
	Connection Connected
}

// ProvisionFlow is the database provisioning flow in the [reconcile.Outcome] shape: the
// [ConditionType] condition from the MariaDB server to the Grant (see "Flows" in the
// package documentation for the order and the reasons), a requeue after [PollInterval]
// while something is not ready, zero Condition and Result on an error.
func ProvisionFlow(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object,
	p ProvisionParams) (Provisioned, error) {
	if err := p.complete(owner); err != nil {
		return Provisioned{}, fmt.Errorf("reconcile database provisioning: %w", err)
	}
	db, user, grant := p.Database, p.User, p.Grant
	if err := apply.CheckScheme(scheme); err != nil {
		return Provisioned{}, fmt.Errorf("reconcile database provisioning of Database %s: %w", keyOf(db), err)
	}

	// 1. The server.
	serverKey := mariaDBKey(db)
	server := &mariadbv1alpha1.MariaDB{}
	if err := c.Get(ctx, serverKey, server); err != nil {
		if apierrors.IsNotFound(err) {
			return notReady(ReasonMariaDBNotFound, fmt.Sprintf("MariaDB %s not found", serverKey))
		}
		return Provisioned{}, fmt.Errorf("reconcile database provisioning: get MariaDB %s: %w", serverKey, err)
	}
	if !isMariaDBReady(server) {
		return notReady(ReasonMariaDBNotReady,
			fmt.Sprintf("waiting for MariaDB %s: %s", serverKey, readyDetail(server.Status.Conditions, server.Generation)))
	}

	// 2. The Database.
	ready, err := EnsureDatabase(ctx, c, scheme, owner, db)
	if err != nil {
		return Provisioned{}, fmt.Errorf("reconcile database provisioning: %w", err)
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
		return Provisioned{}, fmt.Errorf("reconcile database provisioning: %w", err)
	}
	if out, waiting := pw.waiting(secretKey, user); waiting {
		return out, nil
	}

	// 4. The User, then the Grant.
	if _, err := EnsureDatabaseUser(ctx, c, scheme, owner, user, grant); err != nil {
		return Provisioned{}, fmt.Errorf("reconcile database provisioning: %w", err)
	}
	if !isUserReady(user) {
		return notReady(ReasonUserNotReady,
			fmt.Sprintf("waiting for User %s: %s", keyOf(user), readyDetail(user.Status.Conditions, user.Generation)))
	}
	if !isGrantReady(grant) {
		return notReady(ReasonGrantNotReady,
			fmt.Sprintf("waiting for Grant %s: %s", keyOf(grant), grantDetail(grant)))
	}
	msg := fmt.Sprintf("Database %s, User %s and Grant %s are ready on MariaDB %s",
		keyOf(db), keyOf(user), keyOf(grant), serverKey)

	// 5. The connection Secret.
	var conn Connected
	if p.Connection != nil {
		if pw.value == nil { // created by this pass: read it back
			if pw, err = readPasswordSecret(ctx, c, secretKey, ref.Key); err != nil {
				return Provisioned{}, fmt.Errorf("reconcile database provisioning: %w", err)
			}
			if out, waiting := pw.waiting(secretKey, user); waiting {
				return out, nil
			}
		}
		cp := p.connectionParams(server, db, user)
		if conn, err = EnsureConnectionSecret(ctx, c, scheme, owner, cp, string(pw.value)); err != nil {
			return Provisioned{}, fmt.Errorf("reconcile database provisioning: %w", err)
		}
		msg += "; connection Secret " + conn.Key.String() + " written"
	}
	return Provisioned{
		Outcome:    reconcile.Done(reconcile.TrueCondition(ConditionType, ReasonDatabaseProvisioned, msg)),
		Connection: conn,
	}, nil
}

// ReconcileProvision is [ProvisionFlow] answering (condition, result, error); the
// condition carries no observedGeneration, and is zero on an error.
func ReconcileProvision(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	p ProvisionParams,
) (metav1.Condition, ctrl.Result, error) {
	out, err := ProvisionFlow(ctx, c, scheme, owner, p)
	return out.Condition, out.Result, err
}

// notReady is a not-ready outcome: a False condition and a requeue after PollInterval.
func notReady(reason, msg string) (Provisioned, error) {
	return Provisioned{Outcome: reconcile.Requeue(reconcile.FalseCondition(ConditionType, reason, msg), PollInterval)}, nil
}

// waiting is the not-ready outcome of a password Secret that holds no usable password,
// and whether there is one.
func (pw passwordSecret) waiting(secretKey client.ObjectKey, user *mariadbv1alpha1.User) (Provisioned, bool) {
	var out Provisioned
	switch pw.state {
	case passwordPending:
		out, _ = notReady(ReasonPasswordRestorePending,
			fmt.Sprintf("waiting for the backup of password Secret %s of User %s: %s; "+
				"no new password is generated while the backup may still hold one", secretKey, keyOf(user), pw.pending))
	case passwordMissing:
		out, _ = notReady(ReasonPasswordSecretNotReady,
			fmt.Sprintf("waiting for password Secret %s of User %s", secretKey, keyOf(user)))
	case passwordGoing:
		out, _ = notReady(ReasonPasswordSecretNotReady,
			fmt.Sprintf("password Secret %s of User %s is being deleted", secretKey, keyOf(user)))
	case passwordNoKey:
		out, _ = notReady(ReasonPasswordSecretNotReady,
			fmt.Sprintf("password Secret %s of User %s has no value under key %q", secretKey, keyOf(user),
				user.Spec.PasswordSecretKeyRef.Key))
	default:
		return Provisioned{}, false
	}
	return out, true
}

// connectionParams is p.Connection with its empty Connection fields taken from the
// provisioned objects: the server's Service and port, the database and account names.
func (p *ProvisionParams) connectionParams(server *mariadbv1alpha1.MariaDB, db *mariadbv1alpha1.Database,
	user *mariadbv1alpha1.User) ConnectionSecretParams {
	cp := *p.Connection
	conn := &cp.Connection
	if conn.Host == "" {
		conn.Host = serviceHost(mariaDBKey(db), server != nil && server.IsHAEnabled())
	}
	if conn.Port == 0 && server != nil {
		conn.Port = int(server.Spec.Port)
	}
	if conn.Name == "" {
		conn.Name = db.DatabaseNameOrDefault()
	}
	if conn.User == "" {
		conn.User = user.UsernameOrDefault()
	}
	return cp
}

// serviceHost is the DNS name of the Service of the MariaDB server: the primary's with
// HA (replication or Galera), where only the primary takes writes.
func serviceHost(server client.ObjectKey, ha bool) string {
	name := server.Name
	if ha {
		name += "-primary"
	}
	return name + "." + server.Namespace + ".svc"
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
	if p.Connection != nil {
		// The server is not read yet: check what it decides (host and port) with the
		// values it would give, which are valid ones, and a stand-in password.
		cp := p.connectionParams(nil, db, user)
		if err := cp.validate(); err != nil {
			return err
		}
		if _, err := ConnectionURL(cp.Connection, "-"); err != nil {
			return err
		}
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
