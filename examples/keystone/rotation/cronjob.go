package rotation

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// CronJobParams describe a rotation CronJob: one of the operator's own subcommands
// ([RotateKeysArgs], [RotatePasswordArgs]) run from the operator's image.
type CronJobParams struct {
	// Name and Namespace of the CronJob.
	Name, Namespace string
	// Labels go on the CronJob, its Job template and its pod template.
	Labels map[string]string
	// Schedule is the CronJob's schedule.
	Schedule string
	// Suspend is spec.suspend; nil leaves the field out of the CronJob.
	Suspend *bool
	// Image is the operator's image.
	Image string
	// ServiceAccountName runs the pods; empty means the namespace's default.
	ServiceAccountName string
	// Args are the container's arguments, the subcommand first; it names the container.
	Args []string
}

// NewCronJob builds the CronJob of p, hardened as every rotation pod is: one run at a
// time (concurrencyPolicy Forbid), one successful and three failed Jobs kept, two
// retries, no restart in place, a non-root pod with the runtime's seccomp profile, and
// a container without privilege escalation, capabilities or a writable root filesystem.
func NewCronJob(p CronJobParams) *batchv1.CronJob {
	var name string
	if len(p.Args) > 0 {
		name = p.Args[0]
	}
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels},
		Spec: batchv1.CronJobSpec{
			Schedule:                   p.Schedule,
			Suspend:                    p.Suspend,
			ConcurrencyPolicy:          batchv1.ForbidConcurrent,
			SuccessfulJobsHistoryLimit: ptr.To[int32](1),
			FailedJobsHistoryLimit:     ptr.To[int32](3),
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: p.Labels},
				Spec: batchv1.JobSpec{
					BackoffLimit: ptr.To[int32](2),
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: p.Labels},
						Spec: corev1.PodSpec{
							RestartPolicy:      corev1.RestartPolicyNever,
							ServiceAccountName: p.ServiceAccountName,
							SecurityContext: &corev1.PodSecurityContext{
								RunAsNonRoot:   ptr.To(true),
								SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
							},
							Containers: []corev1.Container{{
								Name:  name,
								Image: p.Image,
								Args:  p.Args,
								SecurityContext: &corev1.SecurityContext{
									AllowPrivilegeEscalation: ptr.To(false),
									ReadOnlyRootFilesystem:   ptr.To(true),
									Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
								},
							}},
						},
					},
				},
			},
		},
	}
}
