package keystone

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
	"github.com/c5c3/reconciler-sdk/job"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
)

// ConditionPasswordRotationReady is the condition of the PasswordRotation step.
const ConditionPasswordRotationReady = "PasswordRotationReady"

// The reasons the PasswordRotation step writes.
const (
	// ReasonPasswordRotationIdle (PasswordRotationReady True): the rotation CronJob and
	// the backup PushSecret are in place, no password is staged and none was rotated
	// yet.
	ReasonPasswordRotationIdle = "PasswordRotationIdle"
	// ReasonPasswordRotated (PasswordRotationReady True): the last staged password is
	// the password of the account the pods use; the other account is idle. The message
	// says when it was rotated and which account the pods use.
	ReasonPasswordRotated = "PasswordRotated"
	// ReasonPasswordRotationInProgress (PasswordRotationReady False): a staged password
	// is being switched to; the message names the phase. The step requeues after 10 s.
	ReasonPasswordRotationInProgress = "PasswordRotationInProgress"
	// ReasonPasswordRotationFailed (PasswordRotationReady False): the password Secret
	// is inconsistent (an empty staged or current password, an unknown active account,
	// no password for account A or the active account), or
	// the password Secret, the CronJob or the PushSecret exists but the Keystone does
	// not control it, or it is being deleted: nothing is written.
	ReasonPasswordRotationFailed = "PasswordRotationFailed"
)

// DatabasePasswordCurrentKey is the data key of the Secret
// names.DatabasePasswordSecretName that holds, during a rotation, the new password: the
// User of the account it goes to reads it from there while the key exists. Besides it
// and the accounts' passwords (names.DatabasePasswordDataKey, [DatabasePasswordBDataKey])
// and the active account ([DatabaseActiveAccountKey]), rotation.DatabasePasswordStagedKey
// drives a rotation.
const DatabasePasswordCurrentKey = "current"

// PasswordRotatedAtAnnotation records, in RFC 3339 on the Secret
// names.DatabasePasswordSecretName, when the PasswordRotation step finished the last
// rotation.
const PasswordRotatedAtAnnotation = "keystone.openstack.c5c3.io/password-rotated-at"

// DefaultPasswordRotationSchedule is the schedule of the password rotation CronJob
// when spec.passwordRotation.schedule is empty: monthly, on the 1st at 03:00.
const DefaultPasswordRotationSchedule = "0 3 1 * *"

// PasswordRotationPollInterval is how soon the PasswordRotation step looks again while
// a rotation is in progress.
const PasswordRotationPollInterval = 10 * time.Second

// PasswordCheckJobName is the Job that checks, before the pods switch to an account,
// that the database accepts the account with the new password: k's name followed by
// "-db-password-check".
func PasswordCheckJobName(k *v1alpha1.Keystone) string { return k.Name + "-db-password-check" }

// passwordCheckEnv is the environment variable of the password check Job that holds
// the new password (from data key DatabasePasswordCurrentKey); the connection URL
// refers to it.
const passwordCheckEnv = "KEYSTONE_DB_NEW_PASSWORD"

// passwordPlaceholder stands for the password in the URL the check Job's connection is
// built from; letters only, so the URL carries it unescaped.
const passwordPlaceholder = "KEYSTONEDBNEWPASSWORD"

// PasswordRotationCronJobName is the CronJob that stages a new database password: k's
// name followed by "-password-rotate".
func PasswordRotationCronJobName(k *v1alpha1.Keystone) string { return k.Name + "-password-rotate" }

// PasswordBackupName is the PushSecret that backs the database password Secret up: the
// Secret's name.
func PasswordBackupName(k *v1alpha1.Keystone) string { return names.DatabasePasswordSecretName(k) }

// PasswordRemoteKey is the backend key the database password Secret is backed up to:
// openstack/keystone/<namespace>/<name>/db-password.
func PasswordRemoteKey(k *v1alpha1.Keystone) string {
	return "openstack/keystone/" + k.Namespace + "/" + k.Name + "/db-password"
}

// reconcilePasswordRotation is the PasswordRotation row. Every pass it applies the
// rotation CronJob and the backup PushSecret of the password Secret, stamped with the
// Secret's resourceVersion so that a push of every change can be confirmed
// (secrets.ConfirmPush). The database has two accounts (AccountA, AccountB); the pods
// use the active one (DatabaseActiveAccountKey) and the other is idle. When the Secret
// holds a staged password the step moves one phase further and requeues after 10 s:
//
//  1. staged present: wait until the PushSecret reports a push of the Secret with the
//     staged password; then one optimistic-lock patch moves it to current. From the
//     next pass the idle account's User reads current (a new generation), and
//     mariadb-operator gives the idle account the new password. The active account
//     and its password are untouched.
//  2. current present, the pods still on the other account: wait until the idle
//     account's User reads current and is Ready, and its Grant is Ready; then the
//     Job PasswordCheckJobName connects to the database as that account with the
//     new password (keystone-manage db_version); only once it has completed does one
//     patch set that account's password key to current and make it the active
//     account, so the Config row writes the new connection URL (the other account,
//     the new password) and the pods roll. The Ready conditions alone prove nothing:
//     mariadb-operator writes them without observedGeneration, and a User that was
//     Ready under its previous spec stays Ready, with the same lastTransitionTime,
//     whether or not ALTER USER has run since; the Job is the evidence that the
//     database accepts the credential. A failed check is deleted and runs again.
//  3. current equals the active account's password: wait until the connection Secret
//     holds the new URL and the Deployment has rolled out its pod template; then
//     current is dropped (the User reads the account's own key again, the same value)
//     and PasswordRotatedAtAnnotation is set.
//
// Throughout, the pods not yet replaced connect with the previously active account,
// whose password no rotation step changes: the rollout has no moment in which a pod's
// credential is refused. After it that account is idle; its password is replaced at
// the next rotation, which switches back to it.
func (r *Reconciler) reconcilePasswordRotation(ctx context.Context, k *v1alpha1.Keystone) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	c, scheme := target.Client, target.Client.Scheme()
	key := client.ObjectKey{Namespace: k.Namespace, Name: names.DatabasePasswordSecretName(k)}
	if err := job.EnsureCronJob(ctx, c, scheme, k, r.desiredPasswordRotationCronJob(k)); err != nil {
		return r.rotationFailed(k, err)
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, key, secret); err != nil {
		return reconcile.Outcome{}, fmt.Errorf("password rotation of Keystone %s/%s: get Secret %s: %w", k.Namespace, k.Name, key, err)
	}
	if !apply.IsControlled(c, k, secret) {
		return r.rotationFailed(k, fmt.Errorf("password Secret %s: %w; its passwords are left untouched", key, apply.ErrNotControlled))
	}
	if secret.DeletionTimestamp != nil {
		return r.rotationFailed(k, fmt.Errorf("password Secret %s: %w", key, apply.ErrBeingDeleted))
	}
	backup, err := secrets.ConfirmPush(ctx, c, scheme, k, desiredPasswordBackup(k), secret)
	if err != nil {
		return r.rotationFailed(k, err)
	}
	st, err := readPasswordState(secret.Data)
	if err != nil {
		return r.inconsistent(k, key, err.Error())
	}
	orig := secret.DeepCopy()
	staged, hasStaged := secret.Data[rotation.DatabasePasswordStagedKey]
	switch {
	case st.target != "" && !st.switched:
		return r.switchPods(ctx, c, k, secret, orig, st)
	case st.target != "":
		return r.finishRotation(ctx, c, k, secret, orig, st)
	case hasStaged && len(staged) == 0:
		return r.inconsistent(k, key, "has an empty data key "+rotation.DatabasePasswordStagedKey)
	case hasStaged && !backup.Confirmed:
		return inProgress(fmt.Sprintf("waiting for PushSecret %s/%s, which %s, to push the staged password to remote key %q; "+
			"the idle database account gets it only once the backend holds it", k.Namespace, PasswordBackupName(k), backup.Pending, PasswordRemoteKey(k)))
	case hasStaged:
		secret.Data[DatabasePasswordCurrentKey] = staged
		delete(secret.Data, rotation.DatabasePasswordStagedKey)
		if err := patchSecret(ctx, c, secret, orig); err != nil {
			return reconcile.Outcome{}, fmt.Errorf("password rotation of Keystone %s/%s: update Secret %s with the new current password: %w",
				k.Namespace, k.Name, key, err)
		}
		idle := otherAccount(st.active)
		return inProgress(fmt.Sprintf("giving the staged password to the idle account %s (User %s/%s reads data key %q of Secret %s); "+
			"the pods keep account %s", DatabaseAccountName(k, idle), k.Namespace, DatabaseUserObjectName(k, idle),
			DatabasePasswordCurrentKey, key, DatabaseAccountName(k, st.active)))
	}
	if at := secret.Annotations[PasswordRotatedAtAnnotation]; at != "" {
		return reconcile.Done(reconcile.TrueCondition(ConditionPasswordRotationReady, ReasonPasswordRotated, fmt.Sprintf(
			"database password last rotated at %s; the pods use account %s; CronJob %s stages the next one, PushSecret %s backs it up",
			at, DatabaseAccountName(k, st.active), PasswordRotationCronJobName(k), PasswordBackupName(k)))), nil
	}
	return reconcile.Done(reconcile.TrueCondition(ConditionPasswordRotationReady, ReasonPasswordRotationIdle, fmt.Sprintf(
		"no password staged; the pods use account %s; CronJob %s stages one, PushSecret %s backs the Secret up",
		DatabaseAccountName(k, st.active), PasswordRotationCronJobName(k), PasswordBackupName(k)))), nil
}

// switchPods is phase 2: once the target account's User reads current and is Ready and
// its Grant is Ready, and the password check Job has connected with the new password,
// the target's password key is set to current and the target becomes the active
// account.
func (r *Reconciler) switchPods(ctx context.Context, c client.Client, k *v1alpha1.Keystone, secret, orig *corev1.Secret,
	st passwordState) (reconcile.Outcome, error) {
	user := &mariadbv1alpha1.User{}
	ukey := client.ObjectKey{Namespace: k.Namespace, Name: DatabaseUserObjectName(k, st.target)}
	if err := c.Get(ctx, ukey, user); err != nil {
		if apierrors.IsNotFound(err) {
			return inProgress(fmt.Sprintf("waiting for User %s", ukey))
		}
		return reconcile.Outcome{}, fmt.Errorf("password rotation of Keystone %s/%s: get User %s: %w", k.Namespace, k.Name, ukey, err)
	}
	ref := user.Spec.PasswordSecretKeyRef
	if ref == nil || ref.Name != secret.Name || ref.Key != DatabasePasswordCurrentKey || !readyFor(user.Status.Conditions, user.Generation) {
		return inProgress(fmt.Sprintf("waiting for User %s (account %s) to be Ready with the password in data key %q",
			ukey, DatabaseAccountName(k, st.target), DatabasePasswordCurrentKey))
	}
	grant := &mariadbv1alpha1.Grant{}
	if err := c.Get(ctx, ukey, grant); err != nil {
		if apierrors.IsNotFound(err) {
			return inProgress(fmt.Sprintf("waiting for Grant %s", ukey))
		}
		return reconcile.Outcome{}, fmt.Errorf("password rotation of Keystone %s/%s: get Grant %s: %w", k.Namespace, k.Name, ukey, err)
	}
	if !readyFor(grant.Status.Conditions, grant.Generation) {
		return inProgress(fmt.Sprintf("waiting for Grant %s (account %s) to be Ready", ukey, DatabaseAccountName(k, st.target)))
	}
	if out, err := r.checkNewPassword(ctx, c, k, secret, st); err != nil || !out.Continue() {
		return out, err
	}
	secret.Data[accountPasswordKey(st.target)] = secret.Data[DatabasePasswordCurrentKey]
	secret.Data[DatabaseActiveAccountKey] = []byte(st.target)
	if err := patchSecret(ctx, c, secret, orig); err != nil {
		return reconcile.Outcome{}, fmt.Errorf("password rotation of Keystone %s/%s: update Secret %s/%s to switch to account %s: %w",
			k.Namespace, k.Name, secret.Namespace, secret.Name, st.target, err)
	}
	return inProgress(fmt.Sprintf("the database accepts account %s with the new password; rolling the pods of Deployment %s/%s "+
		"onto it while the pods not yet replaced keep account %s", DatabaseAccountName(k, st.target), k.Namespace, k.Name,
		DatabaseAccountName(k, st.active)))
}

// checkNewPassword runs the password check Job: keystone-manage db_version with the
// connection of the target account and the new password (the password reaches the pod
// through the environment, from data key current; the Job names neither). Its re-run
// key is the password Secret's resourceVersion and the account, so a changed Secret
// checks again. It returns the zero outcome once the Job has completed; while it runs,
// and after a failed run, which it deletes so that the next pass checks again, it
// answers PasswordRotationInProgress with a requeue.
func (r *Reconciler) checkNewPassword(ctx context.Context, c client.Client, k *v1alpha1.Keystone, secret *corev1.Secret,
	st passwordState) (reconcile.Outcome, error) {
	key := client.ObjectKeyFromObject(secret)
	current := string(secret.Data[DatabasePasswordCurrentKey])
	if u := url.UserPassword("u", current).String(); u != "u:"+current {
		return r.inconsistent(k, key, "holds in data key "+DatabasePasswordCurrentKey+
			" a password with characters a connection URL must escape; rotate-password stages letters and digits only")
	}
	account := DatabaseAccountName(k, st.target)
	check, err := desiredPasswordCheckJob(k, st.target)
	if err != nil {
		return r.rotationFailed(k, err)
	}
	jkey := client.ObjectKeyFromObject(check)
	done, err := job.RunJobWithKey(ctx, c, c.Scheme(), k, check, "account "+st.target+" password Secret version "+secret.ResourceVersion)
	switch {
	case errors.Is(err, job.ErrJobFailed):
		if err := deleteFailedJob(ctx, c, jkey); err != nil {
			return reconcile.Outcome{}, fmt.Errorf("password rotation of Keystone %s/%s: %w", k.Namespace, k.Name, err)
		}
		return inProgress(fmt.Sprintf("the database refused account %s with the new password (Job %s failed; mariadb-operator may not "+
			"have applied it yet); the pods keep account %s, and the check runs again", account, jkey, DatabaseAccountName(k, st.active)))
	case errors.Is(err, apply.ErrNotControlled) || errors.Is(err, apply.ErrBeingDeleted):
		return r.rotationFailed(k, err)
	case err != nil:
		return reconcile.Outcome{}, fmt.Errorf("password rotation of Keystone %s/%s: %w", k.Namespace, k.Name, err)
	case !done:
		return inProgress(fmt.Sprintf("Job %s checks that the database accepts account %s with the new password; "+
			"the pods keep account %s", jkey, account, DatabaseAccountName(k, st.active)))
	}
	return reconcile.Outcome{}, nil
}

// deleteFailedJob deletes the failed Job at key (RunJobWithKey has checked that the
// Keystone controls it), preconditioned on the UID it reads, with background
// propagation; one already gone is no error.
func deleteFailedJob(ctx context.Context, c client.Client, key client.ObjectKey) error {
	j := &batchv1.Job{}
	if err := c.Get(ctx, key, j); err != nil {
		return client.IgnoreNotFound(err)
	}
	uid := j.UID
	err := c.Delete(ctx, j, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting the failed Job %s: %w", key, err)
	}
	return nil
}

// desiredPasswordCheckJob is a run-once keystone-manage db_version as account with the
// new password: the Job of the database migrations with its connection built from the
// environment variable passwordCheckEnv (data key current of the password Secret)
// instead of the connection Secret.
func desiredPasswordCheckJob(k *v1alpha1.Keystone, account string) (*batchv1.Job, error) {
	tmpl, err := database.ConnectionURL(connection(k, account), passwordPlaceholder)
	if err != nil {
		return nil, fmt.Errorf("database connection of Keystone %s/%s: %w", k.Namespace, k.Name, err)
	}
	// Kubernetes expands $(VAR) in an environment value and reads "$$" as "$".
	tmpl = strings.Replace(strings.ReplaceAll(tmpl, "$", "$$"), passwordPlaceholder, "$("+passwordCheckEnv+")", 1)
	j := manageJob(k, PasswordCheckJobName(k), "password-check", []string{"keystone-manage", "db_version"}, nil)
	ctr := &j.Spec.Template.Spec.Containers[0]
	env := []corev1.EnvVar{{Name: passwordCheckEnv, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: names.DatabasePasswordSecretName(k)}, Key: DatabasePasswordCurrentKey}}}}
	for _, e := range ctr.Env {
		if e.Name == database.ConnectionEnv {
			e = corev1.EnvVar{Name: database.ConnectionEnv, Value: tmpl}
		}
		env = append(env, e)
	}
	ctr.Env = env
	return j, nil
}

// finishRotation is phase 3: once the connection Secret holds the URL of the active
// account and its new password and the Deployment rolled out with it, current is
// dropped; the previously active account is idle from then on.
func (r *Reconciler) finishRotation(ctx context.Context, c client.Client, k *v1alpha1.Keystone, secret, orig *corev1.Secret,
	st passwordState) (reconcile.Outcome, error) {
	url, err := database.ConnectionURL(connection(k, st.active), string(secret.Data[accountPasswordKey(st.active)]))
	if err != nil {
		return r.rotationFailed(k, fmt.Errorf("database connection: %w", err))
	}
	conn := &corev1.Secret{}
	ckey := client.ObjectKey{Namespace: k.Namespace, Name: names.ConnectionSecretName(k)}
	if err := c.Get(ctx, ckey, conn); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Outcome{}, fmt.Errorf("password rotation of Keystone %s/%s: get Secret %s: %w", k.Namespace, k.Name, ckey, err)
	}
	if string(conn.Data[database.ConnectionDataKey]) != url {
		return inProgress(fmt.Sprintf("waiting for Secret %s to hold the connection of account %s", ckey, DatabaseAccountName(k, st.active)))
	}
	deploy := &appsv1.Deployment{}
	dkey := client.ObjectKey{Namespace: k.Namespace, Name: k.Name}
	if err := c.Get(ctx, dkey, deploy); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Outcome{}, fmt.Errorf("password rotation of Keystone %s/%s: get Deployment %s: %w", k.Namespace, k.Name, dkey, err)
	}
	if deploy.Spec.Template.Annotations[ConnectionVersionAnnotation] != conn.ResourceVersion || !deployment.IsDeploymentReady(deploy) {
		return inProgress(fmt.Sprintf("waiting for Deployment %s to roll out with the connection of account %s; "+
			"the pods not yet replaced keep account %s", dkey, DatabaseAccountName(k, st.active), DatabaseAccountName(k, otherAccount(st.active))))
	}
	delete(secret.Data, DatabasePasswordCurrentKey)
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	now := time.Now().UTC().Format(time.RFC3339)
	secret.Annotations[PasswordRotatedAtAnnotation] = now
	if err := patchSecret(ctx, c, secret, orig); err != nil {
		return reconcile.Outcome{}, fmt.Errorf("password rotation of Keystone %s/%s: update Secret %s/%s to finish the rotation: %w",
			k.Namespace, k.Name, secret.Namespace, secret.Name, err)
	}
	return reconcile.Done(reconcile.TrueCondition(ConditionPasswordRotationReady, ReasonPasswordRotated, fmt.Sprintf(
		"database password rotated at %s: Deployment %s uses account %s; account %s is idle until the next rotation",
		now, dkey, DatabaseAccountName(k, st.active), DatabaseAccountName(k, otherAccount(st.active))))), nil
}

// patchSecret writes secret's changes against orig with an optimistic-lock merge
// patch: a Secret changed since it was read (a password staged meanwhile) fails with a
// Conflict, and the next pass starts from the new state.
func patchSecret(ctx context.Context, c client.Client, secret, orig *corev1.Secret) error {
	return c.Patch(ctx, secret, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
}

// readyFor reports a Ready=True condition among conds observed for generation (or
// without an observedGeneration, as mariadb-operator v25 writes them).
func readyFor(conds []metav1.Condition, generation int64) bool {
	cond := meta.FindStatusCondition(conds, mariadbv1alpha1.ConditionTypeReady)
	return cond != nil && cond.Status == metav1.ConditionTrue &&
		(cond.ObservedGeneration == 0 || cond.ObservedGeneration >= generation)
}

// inProgress is PasswordRotationInProgress with msg and a requeue after 10 s.
func inProgress(msg string) (reconcile.Outcome, error) {
	return reconcile.Requeue(reconcile.FalseCondition(ConditionPasswordRotationReady, ReasonPasswordRotationInProgress, msg),
		PasswordRotationPollInterval), nil
}

// inconsistent is PasswordRotationFailed for a password Secret whose data keys do not
// describe a phase of the rotation; nothing is written, and the pass is retried with
// backoff. what never quotes a value.
func (r *Reconciler) inconsistent(k *v1alpha1.Keystone, key client.ObjectKey, what string) (reconcile.Outcome, error) {
	err := fmt.Errorf("password rotation of Keystone %s/%s: Secret %s %s: %w", k.Namespace, k.Name, key, what, ErrInconsistentPasswordSecret)
	return reconcile.Done(reconcile.FalseCondition(ConditionPasswordRotationReady, ReasonPasswordRotationFailed, err.Error())), err
}

// ErrInconsistentPasswordSecret is wrapped by the errors of the Config and
// PasswordRotation steps for a password Secret whose data keys describe no state of the
// two accounts or no phase of a rotation: no password for account A or for the active
// account, an unknown active account, an empty staged or current password.
var ErrInconsistentPasswordSecret = errors.New("inconsistent database password Secret")

// rotationFailed returns err for the pass; an object the Keystone does not control,
// one being deleted, or a connection that cannot be built also sets
// PasswordRotationFailed.
func (r *Reconciler) rotationFailed(k *v1alpha1.Keystone, err error) (reconcile.Outcome, error) {
	err = fmt.Errorf("password rotation of Keystone %s/%s: %w", k.Namespace, k.Name, err)
	return reconcile.Done(reconcile.FalseCondition(ConditionPasswordRotationReady, ReasonPasswordRotationFailed, err.Error())), err
}

// desiredPasswordBackup pushes the whole password Secret (every data key a property,
// a staged password included) to PasswordRemoteKey; updatePolicy Replace so every
// rotation reaches the backend, deletionPolicy None so the backup outlives the Keystone.
func desiredPasswordBackup(k *v1alpha1.Keystone) *esov1alpha1.PushSecret {
	return &esov1alpha1.PushSecret{
		ObjectMeta: metav1.ObjectMeta{Name: PasswordBackupName(k), Namespace: k.Namespace,
			Labels: names.Labels(k, "password-rotation")},
		Spec: esov1alpha1.PushSecretSpec{
			RefreshInterval: &metav1.Duration{Duration: DefaultBackupRefreshInterval},
			SecretStoreRefs: secrets.PushSecretStoreRefs(secrets.EffectiveStoreRef(k.Spec.SecretStoreRef)),
			UpdatePolicy:    esov1alpha1.PushSecretUpdatePolicyReplace,
			DeletionPolicy:  esov1alpha1.PushSecretDeletionPolicyNone,
			Selector:        esov1alpha1.PushSecretSelector{Secret: &esov1alpha1.PushSecretSecret{Name: names.DatabasePasswordSecretName(k)}},
			Data: []esov1alpha1.PushSecretData{{Match: esov1alpha1.PushSecretMatch{
				RemoteRef: esov1alpha1.PushSecretRemoteRef{RemoteKey: PasswordRemoteKey(k)},
			}}},
		},
	}
}

// desiredPasswordRotationCronJob runs the operator's rotate-password command on
// spec.passwordRotation.schedule (DefaultPasswordRotationSchedule when empty),
// suspended with spec.passwordRotation.suspend, as the ServiceAccount of
// rotationServiceAccount, which needs rotation.PolicyRules.
func (r *Reconciler) desiredPasswordRotationCronJob(k *v1alpha1.Keystone) *batchv1.CronJob {
	schedule := k.Spec.PasswordRotation.Schedule
	if schedule == "" {
		schedule = DefaultPasswordRotationSchedule
	}
	return rotation.NewCronJob(rotation.CronJobParams{
		Name: PasswordRotationCronJobName(k), Namespace: k.Namespace, Labels: names.Labels(k, "password-rotation"),
		Schedule: schedule, Suspend: ptr.To(k.Spec.PasswordRotation.Suspend),
		Image: r.opts.OperatorImage, ServiceAccountName: r.rotationServiceAccount(k),
		Args: rotation.RotatePasswordArgs(client.ObjectKey{Namespace: k.Namespace, Name: names.DatabasePasswordSecretName(k)}),
	})
}
