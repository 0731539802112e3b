package config_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/config"
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
		for _, workload := range []string{"ReplicaSet", "Pod"} {
			t.Run(name+"/"+workload, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				k := kinds[tc.kind]
				ns := env.Namespace(t)
				owner := newOwner(t, ns, "owner")
				used := k.seed(t, ns, base+"-00000001", label, controllerRef(owner)).GetName()
				unused := k.seed(t, ns, base+"-00000002", label, controllerRef(owner)).GetName()
				if workload == "ReplicaSet" {
					newReplicaSet(t, ns, "app", tc.spec(used))
				} else {
					newPod(t, ns, "app", tc.spec(used), "")
				}
				if err := k.pruneWith(ctx, env.Client, owner, base, ns, "", config.PruneOptions{SpareInUse: true}); err != nil {
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
			if err := k.pruneWith(ctx, env.Client, owner, base, ns, "", config.DefaultPruneOptions()); err != nil {
				t.Fatal(err)
			}
			// DefaultPruneOptions retains 3: with one candidate, nothing may go.
			if k.get(t, ns, stale) == nil {
				t.Fatal("pruned within retain")
			}
			if err := k.pruneWith(ctx, env.Client, owner, base, ns, "", config.PruneOptions{SpareInUse: true}); err != nil {
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
	if err := config.PruneImmutableConfigMapsWithOptions(ctx, c, owner, base, ns, "", opts); err != nil {
		t.Fatal(err)
	}
	if got := counter.Total(); got != 1 {
		t.Errorf("a prune with nothing to delete sent %d requests, want 1 (the list)", got)
	}
	counter.Reset()
	opts.Retain = 0
	if err := config.PruneImmutableConfigMapsWithOptions(ctx, c, owner, base, ns, "", opts); err != nil {
		t.Fatal(err)
	}
	if got, want := counter.Method("GET"), 3; got != want {
		t.Errorf("list requests = %d, want %d (ConfigMaps, ReplicaSets, Pods)", got, want)
	}
	if got := counter.Method("DELETE"); got != 1 {
		t.Errorf("DELETE requests = %d, want 1", got)
	}
}

func TestPruneDeletesNothingWhenWorkloadsCannotBeListed(t *testing.T) {
	for _, failing := range []string{"ReplicaSetList", "PodList"} {
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
			err = config.PruneImmutableSecretsWithOptions(ctx, c, owner, base, ns, "", config.PruneOptions{SpareInUse: true})
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
	if err := k.pruneWith(ctx, env.Client, owner, base, ns, "", config.PruneOptions{SpareInUse: true}); err != nil {
		t.Fatal(err)
	}
	if k.get(t, ns, used) == nil {
		t.Error("ConfigMap of an ephemeral container was pruned")
	}
}
