package rotation_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
)

// cronJobShape is what NewCronJob decides: the parameters it passes through and the
// hardening every rotation pod gets.
type cronJobShape struct {
	Name, Schedule, Container, ServiceAccount string
	Suspend                                   *bool
	Args                                      []string
	Labels                                    [3]map[string]string // CronJob, Job template, pod template
	Concurrency                               batchv1.ConcurrencyPolicy
	Successful, Failed, Backoff               *int32
	Restart                                   corev1.RestartPolicy
	Pod                                       *corev1.PodSecurityContext
	Ctr                                       *corev1.SecurityContext
}

func shapeOf(cj *batchv1.CronJob) cronJobShape {
	pod := cj.Spec.JobTemplate.Spec.Template
	ctr := pod.Spec.Containers[0]
	return cronJobShape{Name: cj.Namespace + "/" + cj.Name, Schedule: cj.Spec.Schedule, Container: ctr.Name,
		ServiceAccount: pod.Spec.ServiceAccountName, Suspend: cj.Spec.Suspend, Args: ctr.Args,
		Labels:      [3]map[string]string{cj.Labels, cj.Spec.JobTemplate.Labels, pod.Labels},
		Concurrency: cj.Spec.ConcurrencyPolicy, Successful: cj.Spec.SuccessfulJobsHistoryLimit,
		Failed: cj.Spec.FailedJobsHistoryLimit, Backoff: cj.Spec.JobTemplate.Spec.BackoffLimit,
		Restart: pod.Spec.RestartPolicy, Pod: pod.Spec.SecurityContext, Ctr: ctr.SecurityContext}
}

func TestNewCronJob(t *testing.T) {
	labels := map[string]string{"app.kubernetes.io/component": "fernet-keys"}
	key := client.ObjectKey{Namespace: "openstack", Name: "keystone-fernet-keys"}
	hardened := func(s cronJobShape) cronJobShape {
		s.Concurrency, s.Successful, s.Failed, s.Backoff = batchv1.ForbidConcurrent, ptr.To[int32](1), ptr.To[int32](3), ptr.To[int32](2)
		s.Restart = corev1.RestartPolicyNever
		s.Pod = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
		s.Ctr = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
		s.Labels = [3]map[string]string{labels, labels, labels}
		return s
	}
	cases := map[string]struct {
		reason string
		params rotation.CronJobParams
		want   cronJobShape
	}{
		"KeyRotation": {
			reason: "the subcommand names the container; no suspend given leaves spec.suspend out",
			params: rotation.CronJobParams{Name: "keystone-fernet-rotate", Namespace: "openstack", Labels: labels,
				Schedule: "17 * * * *", Image: "operator:v1", ServiceAccountName: "keystone-rotation",
				Args: rotation.RotateKeysArgs(key, 3, 168*time.Hour)},
			want: hardened(cronJobShape{Name: "openstack/keystone-fernet-rotate", Schedule: "17 * * * *",
				Container: "rotate-keys", ServiceAccount: "keystone-rotation",
				Args: []string{"rotate-keys", "--secret", key.String(), "--max-active-keys", "3", "--interval", "168h"}}),
		},
		"SuspendedPasswordRotation": {
			reason: "a suspend given is passed through, and so is the default ServiceAccount",
			params: rotation.CronJobParams{Name: "keystone-password-rotate", Namespace: "openstack", Labels: labels,
				Schedule: "0 3 1 * *", Suspend: ptr.To(true), Image: "operator:v1",
				Args: rotation.RotatePasswordArgs(client.ObjectKey{Namespace: "openstack", Name: "keystone-db-password"})},
			want: hardened(cronJobShape{Name: "openstack/keystone-password-rotate", Schedule: "0 3 1 * *",
				Container: "rotate-password", Suspend: ptr.To(true),
				Args: []string{"rotate-password", "--secret", "openstack/keystone-db-password"}}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cj := rotation.NewCronJob(tc.params)
			if diff := cmp.Diff(tc.want, shapeOf(cj)); diff != "" {
				t.Errorf("%s\nNewCronJob(...): -want, +got:\n%s", tc.reason, diff)
			}
			if img := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image; img != tc.params.Image {
				t.Errorf("image %q, want %q", img, tc.params.Image)
			}
		})
	}
}
