package keystone

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/job"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
)

// BootstrapPasswordEnv is the environment variable keystone-manage bootstrap reads the
// admin password from; the Job sets it from the admin password Secret, so the password
// is never an argument or an annotation.
const BootstrapPasswordEnv = "OS_BOOTSTRAP_PASSWORD"

// BootstrapKeyDataKey is the key of the HMAC key in the Secret BootstrapKeySecretName.
const BootstrapKeyDataKey = "key"

// DefaultTrustFlushSchedule is the schedule of the trust_flush CronJob when
// spec.trustFlush.schedule is empty: hourly.
const DefaultTrustFlushSchedule = "0 * * * *"

// BootstrapJobName is the Job that runs keystone-manage bootstrap.
func BootstrapJobName(k *v1alpha1.Keystone) string { return k.Name + "-bootstrap" }

// BootstrapKeySecretName is the Secret holding the random key, generated once, that the
// bootstrap's re-run key is an HMAC with.
func BootstrapKeySecretName(k *v1alpha1.Keystone) string { return k.Name + "-bootstrap-key" }

// TrustFlushCronJobName is the CronJob that runs keystone-manage trust_flush.
func TrustFlushCronJobName(k *v1alpha1.Keystone) string { return k.Name + "-trust-flush" }

// reconcileBootstrap is the Bootstrap row: keystone-manage bootstrap creates (or
// updates) the admin account, project and role and the identity endpoints. It runs
// once, and again only when the admin password or a bootstrap argument (admin user,
// region, endpoint URLs) changes: its re-run key is an HMAC-SHA256 of those, keyed with
// a random key the operator generates once into BootstrapKeySecretName, so the key
// stored on the Job says nothing about the password even to one who can guess it.
// Neither an image upgrade nor a new keystone.conf runs it again.
func (r *Reconciler) reconcileBootstrap(ctx context.Context, k *v1alpha1.Keystone) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	c, scheme := target.Client, target.Client.Scheme()
	gs := secrets.DefaultGeneratedSecret(
		client.ObjectKey{Namespace: k.Namespace, Name: BootstrapKeySecretName(k)}, BootstrapKeyDataKey)
	gs.Labels = map[string]string{apply.ManagedByLabel: r.opts.FieldManager}
	if _, err := secrets.EnsureGeneratedSecret(ctx, c, scheme, k, gs); err != nil {
		return reconcile.Outcome{}, err
	}
	hmacKey, err := secrets.GetSecretValue(ctx, c, gs.Key, BootstrapKeyDataKey)
	if err != nil {
		return reconcile.Outcome{}, err
	}
	password, err := secrets.GetSecretValue(ctx, c,
		client.ObjectKey{Namespace: k.Namespace, Name: names.AdminPasswordSecretName(k)}, names.AdminPasswordDataKey)
	if err != nil {
		return reconcile.Outcome{}, err
	}
	args := bootstrapArgs(k)
	jobKey := client.ObjectKey{Namespace: k.Namespace, Name: BootstrapJobName(k)}
	done, err := job.RunJobWithKey(ctx, c, scheme, k, desiredBootstrapJob(k, args), bootstrapRerunKey(hmacKey, password, args))
	return jobVerdict{condition: ConditionBootstrapReady,
		failed: ReasonBootstrapFailed, failedMsg: fmt.Sprintf("Job %s failed; it runs again when the admin password changes or the Job is deleted", jobKey),
		running: ReasonBootstrapInProgress, runningMsg: fmt.Sprintf("Job %s runs keystone-manage bootstrap", jobKey),
		complete: ReasonBootstrapComplete, completeMsg: fmt.Sprintf("Job %s bootstrapped admin user %q", jobKey, adminUser(k)),
	}.outcome(done, err)
}

// bootstrapRerunKey is the hex HMAC-SHA256, keyed with key, of the password and the
// bootstrap arguments, each preceded by its length.
func bootstrapRerunKey(key, password string, args []string) string {
	mac := hmac.New(sha256.New, []byte(key))
	for _, v := range append([]string{password}, args...) {
		_, _ = fmt.Fprintf(mac, "%d:%s", len(v), v)
	}
	return hex.EncodeToString(mac.Sum(nil))
}

// bootstrapArgs is the keystone-manage bootstrap command line: the admin account,
// project and role, and the identity endpoints (public: spec.bootstrap.publicURL, else
// the Service URL). The password is not among them.
func bootstrapArgs(k *v1alpha1.Keystone) []string {
	internal := names.Endpoint(k) + VersionPath
	public := internal
	if u := k.Spec.Bootstrap.PublicURL; u != "" {
		public = u + VersionPath
	}
	region := k.Spec.Bootstrap.Region
	if region == "" {
		region = "RegionOne"
	}
	return []string{
		"keystone-manage", "bootstrap",
		"--bootstrap-username", adminUser(k),
		"--bootstrap-project-name", "admin",
		"--bootstrap-role-name", "admin",
		"--bootstrap-service-name", "keystone",
		"--bootstrap-region-id", region,
		"--bootstrap-admin-url", internal,
		"--bootstrap-internal-url", internal,
		"--bootstrap-public-url", public,
	}
}

func adminUser(k *v1alpha1.Keystone) string {
	if u := k.Spec.Bootstrap.AdminUser; u != "" {
		return u
	}
	return "admin"
}

// desiredBootstrapJob runs args with the admin password from its Secret in
// BootstrapPasswordEnv.
func desiredBootstrapJob(k *v1alpha1.Keystone, args []string) *batchv1.Job {
	return manageJob(k, BootstrapJobName(k), "bootstrap", args, []corev1.EnvVar{{
		Name: BootstrapPasswordEnv,
		ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: names.AdminPasswordSecretName(k)},
			Key:                  names.AdminPasswordDataKey,
		}},
	}})
}

// reconcileTrustFlush is the TrustFlush row: a CronJob that runs keystone-manage
// trust_flush on spec.trustFlush.schedule (DefaultTrustFlushSchedule when empty),
// suspended with spec.trustFlush.suspend.
func (r *Reconciler) reconcileTrustFlush(ctx context.Context, k *v1alpha1.Keystone) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	cj := desiredTrustFlushCronJob(k)
	if err := job.EnsureCronJob(ctx, target.Client, target.Client.Scheme(), k, cj); err != nil {
		return reconcile.Outcome{}, err
	}
	state := "scheduled"
	if k.Spec.TrustFlush.Suspend {
		state = "suspended"
	}
	return reconcile.Done(reconcile.TrueCondition(ConditionTrustFlushReady, ReasonTrustFlushScheduled,
		fmt.Sprintf("CronJob %s/%s %s at %q", k.Namespace, cj.Name, state, cj.Spec.Schedule))), nil
}

// desiredTrustFlushCronJob deletes expired and soft-deleted trusts; runs never overlap.
func desiredTrustFlushCronJob(k *v1alpha1.Keystone) *batchv1.CronJob {
	schedule := k.Spec.TrustFlush.Schedule
	if schedule == "" {
		schedule = DefaultTrustFlushSchedule
	}
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: TrustFlushCronJobName(k), Namespace: k.Namespace,
			Labels: names.Labels(k, "trust-flush")},
		Spec: batchv1.CronJobSpec{
			Schedule:          schedule,
			Suspend:           ptr.To(k.Spec.TrustFlush.Suspend),
			ConcurrencyPolicy: batchv1.ForbidConcurrent,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: names.Labels(k, "trust-flush")},
				Spec: batchv1.JobSpec{
					BackoffLimit: ptr.To[int32](3),
					Template: managePodTemplate(k, "trust-flush",
						[]string{"keystone-manage", "trust_flush"}, nil),
				},
			},
		},
	}
}
