package katalog

import (
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// containerName is the name of the one container of a declared Deployment, Job or CronJob.
const containerName = "main"

// renderer renders the templates of one declaration for one repetition, naming the
// declaration in its errors.
type renderer struct {
	d     passData
	where string
	err   error
}

func (r *renderer) s(t Template, field string) string {
	if r.err != nil {
		return ""
	}
	s, err := render(t, r.d, r.where+"."+field)
	if err != nil {
		r.err = err
	}
	return s
}

func (r *renderer) list(ts []Template, field string) []string {
	if len(ts) == 0 {
		return nil
	}
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = r.s(t, fmt.Sprintf("%s[%d]", field, i))
	}
	return out
}

func (r *renderer) env(m map[string]Template) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, k := range sortedKeys(m) {
		out = append(out, corev1.EnvVar{Name: k, Value: r.s(m[k], "env."+k)})
	}
	return out
}

func (r *renderer) strMap(m map[string]Template, field string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for _, k := range sortedKeys(m) {
		out[k] = r.s(m[k], field+"."+k)
	}
	return out
}

// number renders t to an integer in [minimum, maximum]; def when it renders to "".
func (r *renderer) number(t Template, field string, def, minimum, maximum int) int {
	s := strings.TrimSpace(r.s(t, field))
	if r.err != nil {
		return 0
	}
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < minimum || n > maximum {
		r.err = fmt.Errorf("%w: %s.%s: %q is not a whole number from %d to %d", ErrRender, r.where, field, s, minimum, maximum)
		return 0
	}
	return n
}

// objectMeta is the metadata of a child: its name and namespace, and the labels that tie
// it to the custom resource and CRD entry.
func objectMeta(name, namespace, crName, crd string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: childLabels(crName, crd)}
}

func childLabels(crName, crd string) map[string]string {
	return map[string]string{OwnerLabel: apply.ClaimLabelValue(crName), CRDLabel: crd}
}

func container(r *renderer, image Template, port Template, command, args []Template, env map[string]Template) corev1.Container {
	c := corev1.Container{
		Name:    containerName,
		Image:   r.s(image, "image"),
		Command: r.list(command, "command"),
		Args:    r.list(args, "args"),
		Env:     r.env(env),
	}
	if !port.IsZero() {
		if p := r.number(port, "port", 0, 1, 65535); p > 0 {
			c.Ports = []corev1.ContainerPort{{ContainerPort: int32(p), Protocol: corev1.ProtocolTCP}}
		}
	}
	return c
}

func buildDeployment(decl Deployment, r *renderer, meta metav1.ObjectMeta) (client.Object, error) {
	app := map[string]string{AppLabel: apply.ClaimLabelValue(meta.Name)}
	replicas := r.number(decl.Replicas, "replicas", 1, 0, 1<<20)
	podLabels := map[string]string{}
	for k, v := range meta.Labels {
		podLabels[k] = v
	}
	podLabels[AppLabel] = app[AppLabel]
	dep := &appsv1.Deployment{
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: app},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					container(r, decl.Image, decl.Port, decl.Command, decl.Args, decl.Env),
				}},
			},
		},
	}
	return dep, r.err
}

func buildService(decl Service, r *renderer, meta metav1.ObjectMeta) (client.Object, error) {
	port := r.number(decl.Port, "port", 0, 1, 65535)
	target := r.number(decl.TargetPort, "targetPort", port, 1, 65535)
	selector := r.strMap(decl.Selector, "selector")
	if len(selector) == 0 {
		selector = map[string]string{AppLabel: apply.ClaimLabelValue(meta.Name)}
	}
	svc := &corev1.Service{
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceType(decl.Type),
			Selector: selector,
			Ports: []corev1.ServicePort{{
				Name: "port", Port: int32(port), TargetPort: intstr.FromInt32(int32(target)), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
	return svc, r.err
}

func buildSecret(decl Secret, r *renderer, meta metav1.ObjectMeta) (client.Object, error) {
	data := map[string][]byte{}
	for _, k := range sortedKeys(decl.Data) {
		data[k] = []byte(r.s(decl.Data[k], "data."+k))
	}
	typ := corev1.SecretTypeOpaque
	if decl.Type != "" {
		typ = corev1.SecretType(decl.Type)
	}
	return &corev1.Secret{ObjectMeta: meta, Type: typ, Data: data}, r.err
}

func buildConfigMap(decl ConfigMap, r *renderer, meta metav1.ObjectMeta) (client.Object, error) {
	return &corev1.ConfigMap{ObjectMeta: meta, Data: r.strMap(decl.Data, "data")}, r.err
}

func buildServiceAccount(_ ServiceAccount, r *renderer, meta metav1.ObjectMeta) (client.Object, error) {
	return &corev1.ServiceAccount{ObjectMeta: meta}, r.err
}

func buildJob(decl Job, r *renderer, meta metav1.ObjectMeta) (client.Object, error) {
	job := &batchv1.Job{
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: meta.Labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{container(r, decl.Image, Template{}, decl.Command, decl.Args, decl.Env)},
				},
			},
		},
	}
	if decl.BackoffLimit != nil {
		job.Spec.BackoffLimit = ptr.To(int32(*decl.BackoffLimit))
	}
	return job, r.err
}

func buildCronJob(decl CronJob, r *renderer, meta metav1.ObjectMeta) (client.Object, error) {
	cj := &batchv1.CronJob{
		ObjectMeta: meta,
		Spec: batchv1.CronJobSpec{
			Schedule: r.s(decl.Schedule, "schedule"),
			JobTemplate: batchv1.JobTemplateSpec{
				Spec: batchv1.JobSpec{
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: meta.Labels},
						Spec: corev1.PodSpec{
							RestartPolicy: corev1.RestartPolicyOnFailure,
							Containers:    []corev1.Container{container(r, decl.Image, Template{}, decl.Command, decl.Args, decl.Env)},
						},
					},
				},
			},
		},
	}
	return cj, r.err
}
