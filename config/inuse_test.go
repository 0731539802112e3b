package config_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// podSpec returns a valid pod spec with one container; mutate adds references.
func podSpec(mutate func(*corev1.PodSpec)) corev1.PodSpec {
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}
	if mutate != nil {
		mutate(&spec)
	}
	return spec
}

// mountVolume mounts source as volume "config" in the first container.
func mountVolume(source corev1.VolumeSource) func(*corev1.PodSpec) {
	return func(spec *corev1.PodSpec) {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "config", VolumeSource: source})
		spec.Containers[0].VolumeMounts = append(spec.Containers[0].VolumeMounts,
			corev1.VolumeMount{Name: "config", MountPath: "/etc/app"})
	}
}

// newReplicaSet creates a ReplicaSet with zero replicas (like an old revision a
// Deployment keeps for rollback) whose template has spec.
func newReplicaSet(t *testing.T, ns, name string, spec corev1.PodSpec, finalizers ...string) *appsv1.ReplicaSet {
	t.Helper()
	labels := map[string]string{"app": name}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Finalizers: finalizers},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: new(int32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
	if err := env.Client.Create(context.Background(), rs); err != nil {
		t.Fatalf("create ReplicaSet: %v", err)
	}
	return rs
}

// newPod creates a Pod with spec and, when phase is set, that status phase.
func newPod(t *testing.T, ns, name string, spec corev1.PodSpec, phase corev1.PodPhase) {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: spec}
	if err := env.Client.Create(ctx, pod); err != nil {
		t.Fatalf("create Pod: %v", err)
	}
	if phase != "" {
		pod.Status.Phase = phase
		if err := env.Client.Status().Update(ctx, pod); err != nil {
			t.Fatalf("set Pod phase: %v", err)
		}
	}
}

// newWorkload creates a workload of kind whose pod template has spec. The revision
// kinds create a StatefulSet or DaemonSet whose own template references nothing, and a
// ControllerRevision of it that records spec, as their controllers do for rollbacks.
func newWorkload(t *testing.T, ns, kind string, spec corev1.PodSpec) {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{"app": "app"}
	meta := metav1.ObjectMeta{Name: "app", Namespace: ns}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}
	selector := &metav1.LabelSelector{MatchLabels: labels}
	jobTemplate := func() corev1.PodTemplateSpec {
		tmpl := *template.DeepCopy()
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
		return tmpl
	}
	var obj client.Object
	switch kind {
	case "ReplicaSet":
		newReplicaSet(t, ns, "app", spec)
		return
	case "Pod":
		newPod(t, ns, "app", spec, "")
		return
	case "Deployment":
		obj = &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Selector: selector, Template: template}}
	case "StatefulSet":
		obj = &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Selector: selector, Template: template}}
	case "DaemonSet":
		obj = &appsv1.DaemonSet{ObjectMeta: meta, Spec: appsv1.DaemonSetSpec{Selector: selector, Template: template}}
	case "StatefulSet revision", "DaemonSet revision":
		current := corev1.PodTemplateSpec{ObjectMeta: template.ObjectMeta, Spec: podSpec(nil)}
		var owner client.Object = &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Selector: selector, Template: current}}
		if kind == "DaemonSet revision" {
			owner = &appsv1.DaemonSet{ObjectMeta: meta, Spec: appsv1.DaemonSetSpec{Selector: selector, Template: current}}
		}
		if err := env.Client.Create(ctx, owner); err != nil {
			t.Fatalf("create %s: %v", kind, err)
		}
		newRevision(t, owner, template)
		return
	case "Job":
		obj = &batchv1.Job{ObjectMeta: meta, Spec: batchv1.JobSpec{Template: jobTemplate()}}
	case "CronJob":
		obj = &batchv1.CronJob{ObjectMeta: meta, Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: jobTemplate()}}}}
	default:
		t.Fatalf("unknown workload kind %q", kind)
	}
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatalf("create %s: %v", kind, err)
	}
}

// newRevision creates a ControllerRevision of owner (a StatefulSet or DaemonSet)
// recording template the way their controllers do: {"spec":{"template":{...,
// "$patch":"replace"}}}.
func newRevision(t *testing.T, owner client.Object, template corev1.PodTemplateSpec) *appsv1.ControllerRevision {
	t.Helper()
	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&template)
	if err != nil {
		t.Fatal(err)
	}
	tmpl["$patch"] = "replace"
	raw, err := json.Marshal(map[string]any{"spec": map[string]any{"template": tmpl}})
	if err != nil {
		t.Fatal(err)
	}
	return newRawRevision(t, owner, raw)
}

// newRawRevision creates a ControllerRevision of owner holding raw as data.
func newRawRevision(t *testing.T, owner client.Object, raw []byte) *appsv1.ControllerRevision {
	t.Helper()
	gvk, err := env.Client.GroupVersionKindFor(owner)
	if err != nil {
		t.Fatal(err)
	}
	rev := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: owner.GetName() + "-rev1", Namespace: owner.GetNamespace(),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, gvk)}},
		Data:     runtime.RawExtension{Raw: raw},
		Revision: 1,
	}
	if err := env.Client.Create(context.Background(), rev); err != nil {
		t.Fatalf("create ControllerRevision: %v", err)
	}
	return rev
}

// workloadKinds are the workloads whose references SpareInUse honours.
var workloadKinds = []string{"ReplicaSet", "Pod", "Deployment", "StatefulSet", "DaemonSet",
	"StatefulSet revision", "DaemonSet revision", "Job", "CronJob"}

// TestPruneSparesConfigOfOldReplicaSet is the rollback case: the Deployment's current
// ReplicaSet mounts the current config, an old ReplicaSet scaled to zero still mounts
// the previous one, and an even older config is referenced by nothing.
func TestPruneSparesConfigOfOldReplicaSet(t *testing.T) {
	for kname, k := range kinds {
		t.Run(kname, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "owner")
			var names []string
			for i := range 3 {
				name, err := k.create(ctx, env.Client, owner, base, ns, map[string]string{"rev": string(rune('0' + i))})
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, name)
			}
			oldest, previous, current := names[0], names[1], names[2]
			source := func(name string) corev1.VolumeSource {
				if k.name == "Secret" {
					return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}
				}
				return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: name}}}
			}
			newReplicaSet(t, ns, "app-old", podSpec(mountVolume(source(previous))))
			newReplicaSet(t, ns, "app-new", podSpec(mountVolume(source(current))))

			opts := config.DefaultPruneOptions()
			opts.Retain = 0
			if err := k.pruneWith(ctx, env.Client, owner, base, ns, current, opts); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{previous, current}, k.existing(t, ns, names...)); diff != "" {
				t.Errorf("survivors (-want +got):\n%s", diff)
			}
			// The spec's variant does not look at workloads.
			if err := k.prune(ctx, env.Client, owner, base, ns, current, 0); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{current}, k.existing(t, ns, oldest, previous, current)); diff != "" {
				t.Errorf("survivors without SpareInUse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPruneSparesEveryKindOfReference(t *testing.T) {
	ref := func(name string) corev1.LocalObjectReference { return corev1.LocalObjectReference{Name: name} }
	cases := map[string]struct {
		kind string
		spec func(name string) corev1.PodSpec
	}{
		"ConfigMap volume": {kind: "ConfigMap", spec: func(n string) corev1.PodSpec {
			return podSpec(mountVolume(corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref(n)}}))
		}},
		"ConfigMap projected source": {kind: "ConfigMap", spec: func(n string) corev1.PodSpec {
			return podSpec(mountVolume(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: ref("unrelated")}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: ref(n)}},
			}}}))
		}},
		"ConfigMap envFrom": {kind: "ConfigMap", spec: func(n string) corev1.PodSpec {
			return podSpec(func(s *corev1.PodSpec) {
				s.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: ref(n)}}}
			})
		}},
		"ConfigMap env valueFrom in an init container": {kind: "ConfigMap", spec: func(n string) corev1.PodSpec {
			return podSpec(func(s *corev1.PodSpec) {
				s.InitContainers = []corev1.Container{{Name: "init", Image: "registry.example/init:1", Env: []corev1.EnvVar{
					{Name: "PLAIN", Value: "x"},
					{Name: "FROM", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: ref(n), Key: "k"}}},
				}}}
			})
		}},
		"Secret volume": {kind: "Secret", spec: func(n string) corev1.PodSpec {
			return podSpec(mountVolume(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: n}}))
		}},
		"Secret projected source": {kind: "Secret", spec: func(n string) corev1.PodSpec {
			return podSpec(mountVolume(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: ref(n)}},
			}}}))
		}},
		"Secret envFrom": {kind: "Secret", spec: func(n string) corev1.PodSpec {
			return podSpec(func(s *corev1.PodSpec) {
				s.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: ref(n)}}}
			})
		}},
		"Secret env valueFrom": {kind: "Secret", spec: func(n string) corev1.PodSpec {
			return podSpec(func(s *corev1.PodSpec) {
				s.Containers[0].Env = []corev1.EnvVar{{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{
					SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: ref(n), Key: "password"}}}}
			})
		}},
		"Secret imagePullSecrets": {kind: "Secret", spec: func(n string) corev1.PodSpec {
			return podSpec(func(s *corev1.PodSpec) { s.ImagePullSecrets = []corev1.LocalObjectReference{ref(n)} })
		}},
	}
	for name, tc := range cases {
		// Every workload kind's template goes through the same pod-spec walk: every
		// kind of reference is tried on ReplicaSets and Pods, every workload kind with
		// one kind of reference per object kind.
		workloads := []string{"ReplicaSet", "Pod"}
		if name == "ConfigMap volume" || name == "Secret env valueFrom" {
			workloads = workloadKinds
		}
		for _, workload := range workloads {
			t.Run(name+"/"+workload, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				k := kinds[tc.kind]
				ns := env.Namespace(t)
				owner := newOwner(t, ns, "owner")
				used := k.seed(t, ns, base+"-00000001", label, controllerRef(owner)).GetName()
				unused := k.seed(t, ns, base+"-00000002", label, controllerRef(owner)).GetName()
				newWorkload(t, ns, workload, tc.spec(used))
				if err := k.pruneWith(ctx, env.Client, owner, base, ns, liveName, config.PruneOptions{SpareInUse: true}); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff([]string{used}, k.existing(t, ns, used, unused)); diff != "" {
					t.Errorf("survivors (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestPruneDoesNotSpareForFinishedOrDeletingWorkloads(t *testing.T) {
	k := kinds["ConfigMap"]
	volume := func(n string) corev1.PodSpec {
		return podSpec(mountVolume(corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: n}}}))
	}
	cases := map[string]func(t *testing.T, ns, name string){
		"Pod Succeeded": func(t *testing.T, ns, name string) { newPod(t, ns, "done", volume(name), corev1.PodSucceeded) },
		"Pod Failed":    func(t *testing.T, ns, name string) { newPod(t, ns, "failed", volume(name), corev1.PodFailed) },
		"ReplicaSet being deleted": func(t *testing.T, ns, name string) {
			rs := newReplicaSet(t, ns, "going", volume(name), "example.com/hold")
			ctx := context.Background()
			if err := env.Client.Delete(ctx, rs); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				rs.Finalizers = nil
				_ = env.Client.Update(ctx, rs)
			})
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(rs), rs); err != nil || rs.DeletionTimestamp == nil {
				t.Fatalf("ReplicaSet not held in deletion: %v", err)
			}
		},
		"Job Complete": func(t *testing.T, ns, name string) {
			newWorkload(t, ns, "Job", volume(name))
			if _, err := simulate.MarkJobComplete(context.Background(), env.Client, client.ObjectKey{Namespace: ns, Name: "app"}); err != nil {
				t.Fatal(err)
			}
		},
		"Job Failed": func(t *testing.T, ns, name string) {
			newWorkload(t, ns, "Job", volume(name))
			if _, err := simulate.MarkJobFailed(context.Background(), env.Client, client.ObjectKey{Namespace: ns, Name: "app"}); err != nil {
				t.Fatal(err)
			}
		},
		"ControllerRevision being deleted": func(t *testing.T, ns, name string) {
			ctx := context.Background()
			ss := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns}, Spec: appsv1.StatefulSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "app"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "app"}}, Spec: podSpec(nil)},
			}}
			if err := env.Client.Create(ctx, ss); err != nil {
				t.Fatal(err)
			}
			rev := newRevision(t, ss, corev1.PodTemplateSpec{ObjectMeta: ss.Spec.Template.ObjectMeta, Spec: volume(name)})
			rev.Finalizers = []string{"example.com/hold"}
			if err := env.Client.Update(ctx, rev); err != nil {
				t.Fatal(err)
			}
			if err := env.Client.Delete(ctx, rev); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				rev := &appsv1.ControllerRevision{}
				if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-rev1"}, rev); err == nil {
					rev.Finalizers = nil
					_ = env.Client.Update(ctx, rev)
				}
			})
		},
		"a Secret of the same name is referenced, not the ConfigMap": func(t *testing.T, ns, name string) {
			newReplicaSet(t, ns, "other-kind", podSpec(mountVolume(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}})))
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "owner")
			stale := k.seed(t, ns, base+"-00000001", label, controllerRef(owner)).GetName()
			setup(t, ns, stale)
			if err := k.pruneWith(ctx, env.Client, owner, base, ns, liveName, config.DefaultPruneOptions()); err != nil {
				t.Fatal(err)
			}
			// DefaultPruneOptions retains 3: with one candidate, nothing may go.
			if k.get(t, ns, stale) == nil {
				t.Fatal("pruned within retain")
			}
			if err := k.pruneWith(ctx, env.Client, owner, base, ns, liveName, config.PruneOptions{SpareInUse: true}); err != nil {
				t.Fatal(err)
			}
			if k.get(t, ns, stale) != nil {
				t.Errorf("%s spared although no live workload uses it", stale)
			}
		})
	}
}

func TestPruneSpareInUseListsWorkloadsOnlyWhenDeleting(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	k := kinds["ConfigMap"]
	k.seed(t, ns, base+"-00000001", label, controllerRef(owner))
	c, counter := warmClient(t, ns)
	opts := config.PruneOptions{Retain: 1, SpareInUse: true}
	if err := config.PruneImmutableConfigMapsWithOptions(ctx, c, owner, base, ns, liveName, opts); err != nil {
		t.Fatal(err)
	}
	if got := counter.Total(); got != 1 {
		t.Errorf("a prune with nothing to delete sent %d requests, want 1 (the list)", got)
	}
	counter.Reset()
	opts.Retain = 0
	if err := config.PruneImmutableConfigMapsWithOptions(ctx, c, owner, base, ns, liveName, opts); err != nil {
		t.Fatal(err)
	}
	if got, want := counter.Method("GET"), 9; got != want {
		t.Errorf("list requests = %d, want %d (ConfigMaps and the 8 workload kinds)", got, want)
	}
	if got := counter.Method("DELETE"); got != 1 {
		t.Errorf("DELETE requests = %d, want 1", got)
	}
}

func TestPruneDeletesNothingWhenWorkloadsCannotBeListed(t *testing.T) {
	for _, failing := range []string{"ReplicaSetList", "PodList", "DeploymentList", "StatefulSetList",
		"DaemonSetList", "ControllerRevisionList", "JobList", "CronJobList"} {
		t.Run(failing, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "owner")
			k := kinds["Secret"]
			stale := k.seed(t, ns, base+"-00000001", label, controllerRef(owner)).GetName()
			cl, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
			if err != nil {
				t.Fatal(err)
			}
			c := interceptor.NewClient(cl, interceptor.Funcs{
				List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
					gvk, err := c.GroupVersionKindFor(list)
					if err != nil {
						return err
					}
					if gvk.Kind == failing {
						return apierrors.NewForbidden(schema.GroupResource{Resource: "x"}, "", errors.New("no"))
					}
					return c.List(ctx, list, opts...)
				},
			})
			err = config.PruneImmutableSecretsWithOptions(ctx, c, owner, base, ns, liveName, config.PruneOptions{SpareInUse: true})
			if !apierrors.IsForbidden(err) {
				t.Fatalf("error %v does not unwrap to Forbidden", err)
			}
			if want := strings.TrimSuffix(failing, "List") + "s in " + ns; !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %q", err, want)
			}
			if k.get(t, ns, stale) == nil {
				t.Error("a candidate was deleted although its use could not be checked")
			}
		})
	}
}

func TestPruneSparesConfigOfEphemeralContainer(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	k := kinds["ConfigMap"]
	used := k.seed(t, ns, base+"-00000001", label, controllerRef(owner)).GetName()
	newPod(t, ns, "app", podSpec(nil), "")
	pod := &corev1.Pod{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app"}, pod); err != nil {
		t.Fatal(err)
	}
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "debug", Image: "registry.example/debug:1",
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: used}}}},
	}}}
	if err := env.Client.SubResource("ephemeralcontainers").Update(ctx, pod); err != nil {
		t.Fatalf("add ephemeral container: %v", err)
	}
	if err := k.pruneWith(ctx, env.Client, owner, base, ns, liveName, config.PruneOptions{SpareInUse: true}); err != nil {
		t.Fatal(err)
	}
	if k.get(t, ns, used) == nil {
		t.Error("ConfigMap of an ephemeral container was pruned")
	}
}

// TestPruneDeletesNothingWhenARevisionCannotBeRead: a StatefulSet or DaemonSet
// revision without a readable template might record a reference, so nothing is
// deleted; the revision of another controller, whose data is no pod template, is
// ignored.
func TestPruneDeletesNothingWhenARevisionCannotBeRead(t *testing.T) {
	ctx := context.Background()
	k := kinds["ConfigMap"]
	for name, tc := range map[string]struct {
		owner     func(ns string) client.Object
		data      string
		wantError bool
	}{
		"StatefulSet revision without a template": {
			owner: func(ns string) client.Object {
				return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, Spec: appsv1.StatefulSetSpec{
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}}, Spec: podSpec(nil)},
				}}
			},
			data:      `{"spec":{"replicas":3}}`,
			wantError: true,
		},
		"revision of another controller": {
			owner: func(ns string) client.Object { return newOwner(t, ns, "vm") },
			data:  `{"spec":{"template":"not a pod template"},"cpu":4}`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "owner")
			stale := k.seed(t, ns, base+"-00000001", label, controllerRef(owner)).GetName()
			revOwner := tc.owner(ns)
			if revOwner.GetUID() == "" {
				if err := env.Client.Create(ctx, revOwner); err != nil {
					t.Fatal(err)
				}
			}
			newRawRevision(t, revOwner, []byte(tc.data))
			err := k.pruneWith(ctx, env.Client, owner, base, ns, liveName, config.PruneOptions{SpareInUse: true})
			if tc.wantError {
				if err == nil || !strings.Contains(err.Error(), "ControllerRevision "+ns+"/"+revOwner.GetName()+"-rev1") {
					t.Fatalf("error = %v, want one naming the revision", err)
				}
				if k.get(t, ns, stale) == nil {
					t.Error("a candidate was deleted although a revision could not be read")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if k.get(t, ns, stale) != nil {
				t.Errorf("%s spared although nothing uses it", stale)
			}
		})
	}
}
