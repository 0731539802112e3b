package keystone_test

import (
	"context"
	"testing"
	"time"

	"github.com/c5c3/reconciler-sdk/testenv"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// The rotation CronJobs of the key repositories and of the database password, read
// back from the API server, run the operator image's own subcommand as the rotation
// ServiceAccount, one run at a time, in the same hardened pod: non-root with the
// runtime's seccomp profile, no privilege escalation, no capability, a read-only root.
func TestRotationCronJobsHardened(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, defaultOptions())
	storeReady(t)
	k := createKeystone(t, newKeystone(ns, "keystone"))
	target := stepTarget(env.Client)
	_, _ = keystone.RunStep(ctx, rec, "PasswordRotation", target, k, "") // the password Secret is missing: the CronJob comes first

	fernet := keystone.NewFernetKeysStep(keystone.KeyStepOptions{FieldManager: keystone.FieldManager,
		OperatorImage: operatorImage, ServiceAccountOf: rotation.ServiceAccountName})
	testenv.Eventually(t, 30*time.Second, "the fernet keys' CronJob", func(ctx context.Context) (bool, error) {
		_, _ = simulate.MarkExternalSecretEmpty(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: fernet.RestoreName(k)})
		res, err := fernet.Reconcile(multicluster.WithTarget(ctx, target), k)
		return err == nil && res.IsZero(), err
	})

	for name, command := range map[string]string{
		fernet.CronJobName(k):                   rotation.RotateKeysCommand,
		keystone.PasswordRotationCronJobName(k): rotation.RotatePasswordCommand,
	} {
		cj := &batchv1.CronJob{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cj); err != nil {
			t.Fatal(err)
		}
		pod := cj.Spec.JobTemplate.Spec.Template.Spec
		ctr := pod.Containers[0]
		got := []any{cj.Spec.ConcurrencyPolicy, *cj.Spec.SuccessfulJobsHistoryLimit, *cj.Spec.FailedJobsHistoryLimit,
			*cj.Spec.JobTemplate.Spec.BackoffLimit, pod.RestartPolicy, pod.ServiceAccountName,
			*pod.SecurityContext.RunAsNonRoot, pod.SecurityContext.SeccompProfile.Type,
			ctr.Name, ctr.Image, ctr.Args[0], *ctr.SecurityContext.AllowPrivilegeEscalation,
			*ctr.SecurityContext.ReadOnlyRootFilesystem, ctr.SecurityContext.Capabilities.Drop}
		want := []any{batchv1.ForbidConcurrent, int32(1), int32(3), int32(2), corev1.RestartPolicyNever, "keystone-rotation",
			true, corev1.SeccompProfileTypeRuntimeDefault, command, operatorImage, command, false,
			true, []corev1.Capability{"ALL"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("CronJob %s: -want, +got:\n%s", name, diff)
		}
	}
}
