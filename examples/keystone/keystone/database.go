package keystone

import (
	"context"
	"fmt"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// DBSyncJobName is the Job that runs keystone-manage db_sync, once per image.
func DBSyncJobName(k *v1alpha1.Keystone) string { return k.Name + "-db-sync" }

// reconcileDatabase is the Database row: the MariaDB Database, the User of AccountA
// (with the generated password of the Config row) and its Grant through
// mariadb-operator, the User and Grant of AccountB once it has a password or a rotation
// gives it one, then db_sync once per image. status.syncedImage names the image whose
// migrations completed.
func (r *Reconciler) reconcileDatabase(ctx context.Context, k *v1alpha1.Keystone) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	c, scheme := target.Client, target.Client.Scheme()
	pw := &corev1.Secret{}
	pwKey := client.ObjectKey{Namespace: k.Namespace, Name: names.DatabasePasswordSecretName(k)}
	if err := c.Get(ctx, pwKey, pw); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Outcome{}, fmt.Errorf("database of Keystone %s/%s: get Secret %s: %w", k.Namespace, k.Name, pwKey, err)
	}
	// An inconsistent Secret is the PasswordRotation row's to report; here both Users
	// keep reading their own keys.
	st, _ := readPasswordState(pw.Data)
	provisioned, err := database.ProvisionFlow(ctx, c, scheme, k, database.ProvisionParams{
		Database: desiredDatabase(k), User: desiredUser(k, AccountA, st.userPasswordKey(AccountA)), Grant: desiredGrant(k, AccountA),
	})
	if err != nil || !provisioned.Continue() {
		return provisioned.Outcome, err
	}
	reconcile.ApplyCondition(k, provisioned.Condition) // DatabaseProvisioned, until the db-sync answers
	if st.needsUser(AccountB, pw.Data) {
		user, grant := desiredUser(k, AccountB, st.userPasswordKey(AccountB)), desiredGrant(k, AccountB)
		ready, err := database.EnsureDatabaseUser(ctx, c, scheme, k, user, grant)
		if err != nil {
			return reconcile.Outcome{}, err
		}
		if !ready {
			return reconcile.Requeue(reconcile.FalseCondition(ConditionDatabaseReady, database.ReasonUserNotReady, fmt.Sprintf(
				"waiting for User and Grant %s/%s (account %s) to be Ready", k.Namespace, user.Name, user.Spec.Name)),
				database.PollInterval), nil
		}
	}
	out, err := database.SyncJobsFlow(ctx, c, scheme, k, database.SyncJob{Job: desiredDBSyncJob(k), RerunKey: k.Spec.Image})
	if err == nil && out.Continue() {
		k.Status.SyncedImage = k.Spec.Image
	}
	return out, err
}

// mariaDBRef is the MariaDB server of spec.database.mariaDBRef.
func mariaDBRef(k *v1alpha1.Keystone) mariadbv1alpha1.MariaDBRef {
	return mariadbv1alpha1.MariaDBRef{
		ObjectReference: mariadbv1alpha1.ObjectReference{Name: mariaDBName(k), Namespace: mariaDBNamespace(k)},
		WaitForIt:       true,
	}
}

// desiredDatabase is the logical database spec.database.name.
func desiredDatabase(k *v1alpha1.Keystone) *mariadbv1alpha1.Database {
	return &mariadbv1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: k.Name, Namespace: k.Namespace, Labels: labels(k)},
		Spec:       mariadbv1alpha1.DatabaseSpec{MariaDBRef: mariaDBRef(k), Name: databaseName(k)},
	}
}

// desiredUser is the MariaDB account of account (DatabaseAccountName) with the
// password under data key passwordKey of the password Secret
// (passwordState.userPasswordKey); with TLS it must present a client certificate.
func desiredUser(k *v1alpha1.Keystone, account, passwordKey string) *mariadbv1alpha1.User {
	u := &mariadbv1alpha1.User{
		ObjectMeta: metav1.ObjectMeta{Name: DatabaseUserObjectName(k, account), Namespace: k.Namespace, Labels: labels(k)},
		Spec: mariadbv1alpha1.UserSpec{
			MariaDBRef: mariaDBRef(k),
			Name:       DatabaseAccountName(k, account),
			Host:       "%",
			PasswordSecretKeyRef: &mariadbv1alpha1.SecretKeySelector{
				LocalObjectReference: mariadbv1alpha1.LocalObjectReference{Name: names.DatabasePasswordSecretName(k)},
				Key:                  passwordKey,
			},
		},
	}
	if k.Spec.Database.TLS != nil {
		u.Spec.Require = &mariadbv1alpha1.TLSRequirements{X509: ptr.To(true)}
	}
	return u
}

// desiredGrant gives account every privilege on the database, and only on it.
func desiredGrant(k *v1alpha1.Keystone, account string) *mariadbv1alpha1.Grant {
	return &mariadbv1alpha1.Grant{
		ObjectMeta: metav1.ObjectMeta{Name: DatabaseUserObjectName(k, account), Namespace: k.Namespace, Labels: labels(k)},
		Spec: mariadbv1alpha1.GrantSpec{
			MariaDBRef: mariaDBRef(k),
			Privileges: []string{"ALL PRIVILEGES"},
			Database:   databaseName(k),
			Username:   DatabaseAccountName(k, account),
			Host:       ptr.To("%"),
		},
	}
}

// desiredDBSyncJob runs keystone-manage db_sync with the database URL from the
// connection Secret.
func desiredDBSyncJob(k *v1alpha1.Keystone) *batchv1.Job {
	return manageJob(k, DBSyncJobName(k), "db-sync", []string{"keystone-manage", "db_sync"}, nil)
}

// manageJob is a run-once Job of keystone-manage args, with keystone.conf, the database
// URL and, with TLS, the database client certificate; env is added to the container.
func manageJob(k *v1alpha1.Keystone, name, component string, args []string, env []corev1.EnvVar) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.Namespace, Labels: names.Labels(k, component)},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](3),
			Template:     managePodTemplate(k, component, args, env),
		},
	}
}
