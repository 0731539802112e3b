package config

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// referenced returns the names of the objects of kind rk that a live workload of
// namespace references (see PruneOptions.SpareInUse). A list that fails, or a
// StatefulSet or DaemonSet revision whose template cannot be read, is an error: what
// it would have spared is unknown.
func referenced(ctx context.Context, c client.Client, namespace string, rk resourceKind) (map[string]bool, error) {
	names := map[string]bool{}
	add := func(name string) { names[name] = true }
	list := func(what string, l client.ObjectList) error {
		if err := c.List(ctx, l, client.InNamespace(namespace)); err != nil {
			return fmt.Errorf("list %s in %s to spare %ss in use: %w", what, namespace, rk.kind, err)
		}
		return nil
	}
	live := func(obj metav1.Object) bool { return obj.GetDeletionTimestamp() == nil }

	var pods corev1.PodList
	if err := list("Pods", &pods); err != nil {
		return nil, err
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if live(pod) && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			rk.refs(&pod.Spec, add)
		}
	}

	var replicaSets appsv1.ReplicaSetList
	if err := list("ReplicaSets", &replicaSets); err != nil {
		return nil, err
	}
	for i := range replicaSets.Items {
		if rs := &replicaSets.Items[i]; live(rs) {
			rk.refs(&rs.Spec.Template.Spec, add)
		}
	}

	var deployments appsv1.DeploymentList
	if err := list("Deployments", &deployments); err != nil {
		return nil, err
	}
	for i := range deployments.Items {
		if d := &deployments.Items[i]; live(d) {
			rk.refs(&d.Spec.Template.Spec, add)
		}
	}

	var statefulSets appsv1.StatefulSetList
	if err := list("StatefulSets", &statefulSets); err != nil {
		return nil, err
	}
	for i := range statefulSets.Items {
		if ss := &statefulSets.Items[i]; live(ss) {
			rk.refs(&ss.Spec.Template.Spec, add)
		}
	}

	var daemonSets appsv1.DaemonSetList
	if err := list("DaemonSets", &daemonSets); err != nil {
		return nil, err
	}
	for i := range daemonSets.Items {
		if ds := &daemonSets.Items[i]; live(ds) {
			rk.refs(&ds.Spec.Template.Spec, add)
		}
	}

	var revisions appsv1.ControllerRevisionList
	if err := list("ControllerRevisions", &revisions); err != nil {
		return nil, err
	}
	for i := range revisions.Items {
		rev := &revisions.Items[i]
		if !live(rev) {
			continue
		}
		template, err := revisionTemplate(rev)
		if err != nil {
			return nil, fmt.Errorf("read ControllerRevision %s/%s to spare %ss in use: %w", namespace, rev.Name, rk.kind, err)
		}
		if template != nil {
			rk.refs(&template.Spec, add)
		}
	}

	var jobs batchv1.JobList
	if err := list("Jobs", &jobs); err != nil {
		return nil, err
	}
	for i := range jobs.Items {
		if job := &jobs.Items[i]; live(job) && !jobFinished(job) {
			rk.refs(&job.Spec.Template.Spec, add)
		}
	}

	var cronJobs batchv1.CronJobList
	if err := list("CronJobs", &cronJobs); err != nil {
		return nil, err
	}
	for i := range cronJobs.Items {
		if cj := &cronJobs.Items[i]; live(cj) {
			rk.refs(&cj.Spec.JobTemplate.Spec.Template.Spec, add)
		}
	}
	return names, nil
}

// revisionTemplate returns the pod template a ControllerRevision records: the
// StatefulSet and DaemonSet controllers store {"spec":{"template":{...}}} in its data.
// A revision of another controller, whose data has no such template, yields nil; a
// revision of a StatefulSet or DaemonSet whose data cannot be read is an error.
func revisionTemplate(rev *appsv1.ControllerRevision) (*corev1.PodTemplateSpec, error) {
	raw := rev.Data.Raw
	if len(raw) == 0 && rev.Data.Object != nil {
		var err error
		if raw, err = json.Marshal(rev.Data.Object); err != nil {
			return nil, err
		}
	}
	var data struct {
		Spec struct {
			Template *corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	err := json.Unmarshal(raw, &data)
	if ref := metav1.GetControllerOfNoCopy(rev); ref != nil && ref.APIVersion == appsv1.SchemeGroupVersion.String() &&
		(ref.Kind == "StatefulSet" || ref.Kind == "DaemonSet") {
		switch {
		case err != nil:
			return nil, fmt.Errorf("revision of %s %s: %w", ref.Kind, ref.Name, err)
		case data.Spec.Template == nil:
			return nil, fmt.Errorf("revision of %s %s holds no spec.template", ref.Kind, ref.Name)
		}
	}
	if err != nil {
		return nil, nil
	}
	return data.Spec.Template, nil
}

// jobFinished reports a Job with a Complete or Failed condition: its pods will not run
// again.
func jobFinished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// configMapRefs yields every ConfigMap spec references: volumes, projected sources,
// envFrom and env valueFrom of all containers.
func configMapRefs(spec *corev1.PodSpec, yield func(string)) {
	for i := range spec.Volumes {
		v := &spec.Volumes[i].VolumeSource
		if v.ConfigMap != nil {
			yield(v.ConfigMap.Name)
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.ConfigMap != nil {
					yield(src.ConfigMap.Name)
				}
			}
		}
	}
	visitEnv(spec, func(from *corev1.EnvFromSource, env *corev1.EnvVar) {
		if from != nil && from.ConfigMapRef != nil {
			yield(from.ConfigMapRef.Name)
		}
		if env != nil && env.ValueFrom != nil && env.ValueFrom.ConfigMapKeyRef != nil {
			yield(env.ValueFrom.ConfigMapKeyRef.Name)
		}
	})
}

// secretRefs yields every Secret spec references: volumes, projected sources, envFrom
// and env valueFrom of all containers, and imagePullSecrets.
func secretRefs(spec *corev1.PodSpec, yield func(string)) {
	for i := range spec.Volumes {
		v := &spec.Volumes[i].VolumeSource
		if v.Secret != nil {
			yield(v.Secret.SecretName)
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.Secret != nil {
					yield(src.Secret.Name)
				}
			}
		}
	}
	for _, ref := range spec.ImagePullSecrets {
		yield(ref.Name)
	}
	visitEnv(spec, func(from *corev1.EnvFromSource, env *corev1.EnvVar) {
		if from != nil && from.SecretRef != nil {
			yield(from.SecretRef.Name)
		}
		if env != nil && env.ValueFrom != nil && env.ValueFrom.SecretKeyRef != nil {
			yield(env.ValueFrom.SecretKeyRef.Name)
		}
	})
}

// visitEnv calls visit with every envFrom source and every env var of the containers,
// init containers and ephemeral containers of spec.
func visitEnv(spec *corev1.PodSpec, visit func(*corev1.EnvFromSource, *corev1.EnvVar)) {
	each := func(envFrom []corev1.EnvFromSource, env []corev1.EnvVar) {
		for i := range envFrom {
			visit(&envFrom[i], nil)
		}
		for i := range env {
			visit(nil, &env[i])
		}
	}
	for i := range spec.InitContainers {
		each(spec.InitContainers[i].EnvFrom, spec.InitContainers[i].Env)
	}
	for i := range spec.Containers {
		each(spec.Containers[i].EnvFrom, spec.Containers[i].Env)
	}
	for i := range spec.EphemeralContainers {
		each(spec.EphemeralContainers[i].EnvFrom, spec.EphemeralContainers[i].Env)
	}
}
