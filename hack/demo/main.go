// Command demo shows reconciler-sdk at work against a local kube-apiserver and etcd
// (envtest) with real kube-controller-manager, kube-scheduler and kwok: it applies a
// Deployment and a Service owned by a parent object, shows that the server's defaults
// stay out of the SDK's field ownership, that re-applying a converged object writes
// nothing, that drift is repaired, that the Deployment becomes Available through real
// ReplicaSets and pods, that deleting the parent garbage-collects its children, that an
// object someone else made is never taken over, and that an Applier with the operator's
// own field manager keeps a converged object without sending a request.
//
// Run it with `make demo` (which provides the envtest binaries).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/testenv"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	// The demo prints its own story; controller-runtime's internal logs stay quiet.
	ctrllog.SetLogger(logr.Discard())
	fmt.Println("starting kube-apiserver, etcd, kube-controller-manager, kube-scheduler and kwok ...")
	env, err := testenv.Start(testenv.Options{Controllers: true})
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()

	c, counter, err := env.CountingClient()
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
	if err := c.Create(ctx, ns); err != nil {
		return err
	}
	// The parent stands in for an operator's custom resource.
	parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "demo"}}
	if err := c.Create(ctx, parent); err != nil {
		return err
	}

	dep, svc := desiredDeployment(), desiredService()
	if err := apply.EnsureObject(ctx, c, env.Scheme, parent, dep, apply.FieldManager); err != nil {
		return err
	}
	if err := apply.EnsureObject(ctx, c, env.Scheme, parent, svc, apply.FieldManager); err != nil {
		return err
	}
	fmt.Printf("1. applied Deployment %s and Service %s, controlled by %s\n",
		dep.Name, svc.Name, metav1.GetControllerOf(dep).Name)
	fmt.Printf("   the server filled in clusterIP=%s and revisionHistoryLimit=%d; %q does not own them\n",
		svc.Spec.ClusterIP, *dep.Spec.RevisionHistoryLimit, apply.FieldManager)

	// No controller writes to the Service, so its resourceVersion shows the no-op.
	rv := svc.ResourceVersion
	counter.Reset()
	svc = desiredService()
	if err := apply.EnsureObject(ctx, c, env.Scheme, parent, svc, apply.FieldManager); err != nil {
		return err
	}
	fmt.Printf("2. re-applied the same desired Service: %d requests (the ownership read and the apply), %d changed anything; resourceVersion %s -> %s\n",
		counter.Total(), writesThatChanged(rv, svc.ResourceVersion), rv, svc.ResourceVersion)

	// Someone edits the image by hand (the controllers write status meanwhile: retry).
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		edited := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(dep), edited); err != nil {
			return err
		}
		edited.Spec.Template.Spec.Containers[0].Image = "registry.example/keystone:hand-edited"
		return c.Update(ctx, edited, client.FieldOwner("kubectl-edit"))
	})
	if err != nil {
		return err
	}
	dep = desiredDeployment()
	if err := apply.EnsureObject(ctx, c, env.Scheme, parent, dep, apply.FieldManager); err != nil {
		return err
	}
	fmt.Printf("3. someone edited the image by hand; the next apply restored %s\n",
		dep.Spec.Template.Spec.Containers[0].Image)

	fmt.Println("4. waiting for the Deployment to roll out through real ReplicaSets and pods ...")
	key := client.ObjectKeyFromObject(dep)
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, dep); err != nil {
			return false, err
		}
		return dep.Status.ObservedGeneration == dep.Generation && dep.Status.AvailableReplicas == *dep.Spec.Replicas, nil
	})
	if err != nil {
		return fmt.Errorf("deployment %s did not become available: %w", key, err)
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace("demo"), client.MatchingLabels(dep.Spec.Selector.MatchLabels)); err != nil {
		return err
	}
	fmt.Printf("   Available: %d/%d replicas, pods:", dep.Status.AvailableReplicas, *dep.Spec.Replicas)
	for _, p := range pods.Items {
		fmt.Printf(" %s(%s)", p.Name, p.Status.Phase)
	}
	fmt.Println()

	if err := c.Delete(ctx, parent); err != nil {
		return err
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		derr := c.Get(ctx, key, &appsv1.Deployment{})
		serr := c.Get(ctx, client.ObjectKeyFromObject(svc), &corev1.Service{})
		return apierrors.IsNotFound(derr) && apierrors.IsNotFound(serr), nil
	})
	if err != nil {
		return fmt.Errorf("children of the deleted parent were not collected: %w", err)
	}
	fmt.Println("5. deleted the parent: the garbage collector removed the Deployment and the Service")

	// A ConfigMap made by hand, named like a child a new parent wants: never taken over.
	handmade := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "horizon-config", Namespace: "demo"},
		Data: map[string]string{"owner": "a human"}}
	if err := c.Create(ctx, handmade); err != nil {
		return err
	}
	horizon := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "horizon", Namespace: "demo"}}
	if err := c.Create(ctx, horizon); err != nil {
		return err
	}
	want := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "horizon-config", Namespace: "demo"},
		Data: map[string]string{"owner": "the operator"}}
	err = apply.EnsureObject(ctx, c, env.Scheme, horizon, want, apply.FieldManager)
	switch {
	case err == nil:
		return errors.New("apply over a hand-made ConfigMap was not refused")
	case !errors.Is(err, apply.ErrNotControlled):
		return fmt.Errorf("apply over a hand-made ConfigMap: %w, want a refusal", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(handmade), handmade); err != nil {
		return err
	}
	fmt.Printf("6. a hand-made ConfigMap named like a wanted child was refused and left as it was (owner=%q):\n   %v\n",
		handmade.Data["owner"], err)
	return applierStep(ctx, env, horizon)
}

// applierStep shows the Applier: the operator's own field manager, and a converged apply
// through a manager's cache that sends no request at all.
func applierStep(ctx context.Context, env *testenv.Env, parent client.Object) error {
	counter := &testenv.RequestCounter{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(counter.Wrap)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  apply.CacheOptions("horizon-operator"),
	})
	if err != nil {
		return err
	}
	mctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = mgr.Start(mctx) }()
	if !mgr.GetCache().WaitForCacheSync(mctx) {
		return errors.New("manager cache did not sync")
	}
	applier := apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{
		FieldManager: "horizon-operator", APIReader: mgr.GetAPIReader()})
	desired := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "horizon-settings", Namespace: "demo"},
			Data: map[string]string{"SESSION_ENGINE": "signed_cookies"}}
	}
	// Apply until the informer has the object and the Applier skips it.
	var last apply.Write
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		wctx, writes := apply.WithWrites(ctx)
		if err := apply.EnsureObject(wctx, applier, env.Scheme, parent, desired(), apply.FieldManager); err != nil {
			return false, err
		}
		last = writes.All()[0]
		return last.Action == apply.ActionSkipped, nil
	})
	if err != nil {
		return fmt.Errorf("the Applier never skipped the converged ConfigMap: %w", err)
	}
	counter.Reset()
	for range 10 {
		if err := apply.EnsureObject(ctx, applier, env.Scheme, parent, desired(), apply.FieldManager); err != nil {
			return err
		}
	}
	stored := desired()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(stored), stored); err != nil {
		return err
	}
	fmt.Printf("7. through an Applier named %q on a manager's cache: 10 converged applies sent %d requests;\n"+
		"   the ConfigMap is managed by %v\n", applier.FieldManager(), counter.Total(), managers(stored))
	return nil
}

// managers lists the field managers of obj.
func managers(obj client.Object) []string {
	var out []string
	for _, mf := range obj.GetManagedFields() {
		out = append(out, mf.Manager)
	}
	return out
}

// writesThatChanged is 1 when the resourceVersion moved, else 0.
func writesThatChanged(before, after string) int {
	if before == after {
		return 0
	}
	return 1
}

func desiredDeployment() *appsv1.Deployment {
	labels := map[string]string{"app.kubernetes.io/name": "keystone"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "keystone-api", Namespace: "demo"},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "keystone", Image: "registry.example/keystone:2026.1",
					Ports: []corev1.ContainerPort{{Name: "api", ContainerPort: 5000}},
				}}},
			},
		},
	}
}

func desiredService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "keystone-api", Namespace: "demo"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app.kubernetes.io/name": "keystone"},
			Ports:    []corev1.ServicePort{{Name: "api", Port: 5000, TargetPort: intstr.FromString("api")}},
		},
	}
}
