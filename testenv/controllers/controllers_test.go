package controllers_test

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// newOwner creates a ConfigMap in ns that owns what a test applies.
func newOwner(t *testing.T, ns string) *corev1.ConfigMap {
	t.Helper()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := env.Client.Create(context.Background(), owner); err != nil {
		t.Fatalf("create owner: %v", err)
	}
	return owner
}

func deployment(ns, image string) *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: image,
				}}},
			},
		},
	}
}

// ensureDeployment applies d with apply.EnsureObject, owned by owner.
func ensureDeployment(t *testing.T, owner client.Object, d *appsv1.Deployment) {
	t.Helper()
	if err := apply.EnsureObject(context.Background(), env.Client, env.Scheme, owner, d, apply.FieldManager); err != nil {
		t.Fatalf("apply Deployment: %v", err)
	}
}

// waitRolledOut waits until the Deployment has observed its latest generation and
// all its replicas are updated, ready and available, with Available True.
func waitRolledOut(t *testing.T, key client.ObjectKey) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	eventually(t, "Deployment "+key.String()+" to roll out", func(ctx context.Context) (bool, string, error) {
		if err := env.Client.Get(ctx, key, d); err != nil {
			return false, "", err
		}
		s := d.Status
		want := *d.Spec.Replicas
		done := s.ObservedGeneration == d.Generation && s.Replicas == want && s.UpdatedReplicas == want &&
			s.ReadyReplicas == want && s.AvailableReplicas == want &&
			conditionTrue(s.Conditions, appsv1.DeploymentAvailable)
		return done, fmt.Sprintf("generation=%d status=%+v", d.Generation, s), nil
	})
	return d
}

func conditionTrue(conds []appsv1.DeploymentCondition, typ appsv1.DeploymentConditionType) bool {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// replicaSetsOf lists the ReplicaSets that d controls.
func replicaSetsOf(t *testing.T, d *appsv1.Deployment) []appsv1.ReplicaSet {
	t.Helper()
	list := &appsv1.ReplicaSetList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(d.Namespace)); err != nil {
		t.Fatalf("list ReplicaSets: %v", err)
	}
	var out []appsv1.ReplicaSet
	for _, rs := range list.Items {
		if ref := metav1.GetControllerOf(&rs); ref != nil && ref.UID == d.UID {
			out = append(out, rs)
		}
	}
	return out
}

// podsOf lists the pods in ns whose controller is the ReplicaSet or Job with uid.
func podsOf(t *testing.T, ns string, uid types.UID) []corev1.Pod {
	t.Helper()
	list := &corev1.PodList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatalf("list Pods: %v", err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == uid {
			out = append(out, p)
		}
	}
	return out
}

func TestGarbageCollectorDeletesOwnedChild(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns}}
	if err := controllerutil.SetOwnerReference(owner, child, env.Scheme); err != nil {
		t.Fatal(err)
	}
	// An object with no owner next to it: the collector must leave it alone.
	bystander := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bystander", Namespace: ns}}
	for _, cm := range []*corev1.ConfigMap{child, bystander} {
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}

	if err := env.Client.Delete(ctx, owner); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the owned ConfigMap to be collected", func(ctx context.Context) (bool, string, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(child), &corev1.ConfigMap{})
		if apierrors.IsNotFound(err) {
			return true, "child gone", nil
		}
		return false, "child still present", err
	})
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(bystander), &corev1.ConfigMap{}); err != nil {
		t.Errorf("ConfigMap without owner: %v, want it kept", err)
	}
}

func TestDeploymentBecomesAvailableThroughPods(t *testing.T) {
	ns := env.Namespace(t)
	d := deployment(ns, "registry.example/web:1")
	ensureDeployment(t, newOwner(t, ns), d)

	d = waitRolledOut(t, client.ObjectKeyFromObject(d))
	rss := replicaSetsOf(t, d)
	if len(rss) != 1 {
		t.Fatalf("Deployment controls %d ReplicaSets, want 1", len(rss))
	}
	pods := podsOf(t, ns, rss[0].UID)
	if len(pods) != 2 {
		t.Fatalf("ReplicaSet %s controls %d pods, want 2", rss[0].Name, len(pods))
	}
	for _, p := range pods {
		if p.Spec.NodeName != testenv.FakeNodeName || p.Status.Phase != corev1.PodRunning || !podReady(&p) || p.Status.PodIP == "" {
			t.Errorf("pod %s: node=%q phase=%s ready=%v ip=%q; want scheduled to %s, Running, Ready, with an IP",
				p.Name, p.Spec.NodeName, p.Status.Phase, podReady(&p), p.Status.PodIP, testenv.FakeNodeName)
		}
	}
}

func TestDeploymentRollsOnPodTemplateChange(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	ensureDeployment(t, owner, deployment(ns, "registry.example/web:1"))
	first := waitRolledOut(t, client.ObjectKey{Namespace: ns, Name: "web"})
	oldRS := replicaSetsOf(t, first)
	if len(oldRS) != 1 {
		t.Fatalf("Deployment controls %d ReplicaSets before the change, want 1", len(oldRS))
	}

	ensureDeployment(t, owner, deployment(ns, "registry.example/web:2"))
	second := waitRolledOut(t, client.ObjectKeyFromObject(first))
	if second.Generation <= first.Generation {
		t.Fatalf("generation %d after the change, want more than %d", second.Generation, first.Generation)
	}
	rss := replicaSetsOf(t, second)
	if len(rss) != 2 {
		t.Fatalf("Deployment controls %d ReplicaSets after the change, want 2 (old and new)", len(rss))
	}
	var newRS *appsv1.ReplicaSet
	for i := range rss {
		if rss[i].UID == oldRS[0].UID {
			if n := *rss[i].Spec.Replicas; n != 0 {
				t.Errorf("old ReplicaSet %s has %d replicas, want scaled to 0", rss[i].Name, n)
			}
			continue
		}
		newRS = &rss[i]
	}
	if newRS == nil {
		t.Fatal("no new ReplicaSet after the pod-template change")
	}
	if img := newRS.Spec.Template.Spec.Containers[0].Image; img != "registry.example/web:2" {
		t.Errorf("new ReplicaSet runs %s, want registry.example/web:2", img)
	}
	eventually(t, "the old ReplicaSet's pods to be deleted", func(ctx context.Context) (bool, string, error) {
		n := len(podsOf(t, ns, oldRS[0].UID))
		return n == 0, fmt.Sprintf("%d old pods", n), nil
	})
	if n := len(podsOf(t, ns, newRS.UID)); n != 2 {
		t.Errorf("new ReplicaSet controls %d pods, want 2", n)
	}
}

func TestDeletingOwnerReclaimsDeploymentReplicaSetsAndPods(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	d := deployment(ns, "registry.example/web:1")
	ensureDeployment(t, owner, d)
	d = waitRolledOut(t, client.ObjectKeyFromObject(d))
	rs := replicaSetsOf(t, d)
	if len(rs) != 1 || len(podsOf(t, ns, rs[0].UID)) != 2 {
		t.Fatalf("want 1 ReplicaSet with 2 pods before deleting the owner, got %d ReplicaSets", len(rs))
	}

	if err := env.Client.Delete(ctx, owner); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Deployment, its ReplicaSet and its pods to be collected", func(ctx context.Context) (bool, string, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), &appsv1.Deployment{})
		if err != nil && !apierrors.IsNotFound(err) {
			return false, "", err
		}
		deploymentGone := apierrors.IsNotFound(err)
		rsList := &appsv1.ReplicaSetList{}
		podList := &corev1.PodList{}
		if err := env.Client.List(ctx, rsList, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		if err := env.Client.List(ctx, podList, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		return deploymentGone && len(rsList.Items) == 0 && len(podList.Items) == 0,
			fmt.Sprintf("deployment gone=%v replicasets=%d pods=%d", deploymentGone, len(rsList.Items), len(podList.Items)), nil
	})
}

func TestJobCompletes(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "migrate", Namespace: ns},
		Spec: batchv1.JobSpec{
			BackoffLimit: new(int32(0)),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "migrate", Image: "registry.example/migrate:1"}},
			}},
		},
	}
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, newOwner(t, ns), job, apply.FieldManager); err != nil {
		t.Fatalf("apply Job: %v", err)
	}
	eventually(t, "the Job to complete", func(ctx context.Context) (bool, string, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return false, "", err
		}
		complete := false
		for _, c := range job.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				complete = true
			}
		}
		return complete && job.Status.Succeeded == 1, fmt.Sprintf("status=%+v", job.Status), nil
	})
	if job.Status.Failed != 0 || job.Status.CompletionTime == nil {
		t.Errorf("Job status = %+v, want no failure and a completion time", job.Status)
	}
	pods := podsOf(t, ns, job.UID)
	if len(pods) != 1 || pods[0].Status.Phase != corev1.PodSucceeded || pods[0].Spec.NodeName != testenv.FakeNodeName {
		t.Errorf("Job pods = %d, want 1 Succeeded on %s", len(pods), testenv.FakeNodeName)
	}
}
