package secrets_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/secrets"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// ConfigMaps stand in for CRs that read the Secret named in their data: a Secret event
// enqueues exactly the readers of that Secret in its namespace, found through the
// field index, and nothing for the Secrets nobody reads.
func TestSecretWatchesEnqueueTheReaders(t *testing.T) {
	ns, elsewhere := env.Namespace(t), env.Namespace(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, cm := range []struct{ ns, name, secret string }{
		{ns, "reader-b", "db"}, {ns, "reader-a", "db"}, {ns, "other", "tls"}, {elsewhere, "reader-c", "db"},
	} {
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cm.ns, Name: cm.name},
			Data: map[string]string{"secret": cm.secret}}
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	mgr, err := multicluster.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Logger: logr.Discard(),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}}, multicluster.ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	local := mgr.GetLocalManager()
	if err := secrets.IndexSecretRefs(ctx, local.GetFieldIndexer(), &corev1.ConfigMap{},
		func(cm *corev1.ConfigMap) []string { return []string{cm.Data["secret"]} }); err != nil {
		t.Fatal(err)
	}
	targets := func(context.Context, client.ObjectKey) (string, bool) { return "", true }
	b, err := secrets.AddSecretWatches(mcbuilder.ControllerManagedBy(mgr).Named("secret-readers").
		WithOptions(controller.TypedOptions[mcreconcile.Request]{SkipNameValidation: ptr.To(true)}), env.Scheme, targets,
		secrets.SecretRefFanOut(local.GetClient(), func() client.ObjectList { return &corev1.ConfigMapList{} }))
	if err != nil {
		t.Fatal(err)
	}
	var got enqueued
	err = b.Complete(multicluster.LocalReconciler(got.reconciler()))
	if err != nil {
		t.Fatal(err)
	}
	ctx = testenv.Go(t, mgr.Start)
	if !local.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	for _, name := range []string{"unread", "db"} {
		if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{ns + "/reader-a", ns + "/reader-b"}
	snapshot := func() []string { return got.in(false, ns, elsewhere) }
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return len(snapshot()) >= len(want), nil }); err != nil {
		t.Fatalf("the readers were not enqueued; got %v", snapshot())
	}
	time.Sleep(300 * time.Millisecond) // an event for "unread" would have been mapped by now
	if diff := cmp.Diff(want, snapshot()); diff != "" {
		t.Fatalf("enqueued (-want +got):\n%s", diff)
	}
}

func TestAddSecretWatchesRefusesANilMapper(t *testing.T) {
	mgr, err := multicluster.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"}}, multicluster.ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	targets := func(context.Context, client.ObjectKey) (string, bool) { return "", true }
	b, err := secrets.AddSecretWatches(mcbuilder.ControllerManagedBy(mgr), env.Scheme, targets, nil)
	if b != nil || !errors.Is(err, secrets.ErrNilSecretMapper) {
		t.Fatalf("AddSecretWatches(nil) = %v, %v", b, err)
	}
}

// A failed List enqueues nothing (and is logged) rather than guessing.
func TestSecretRefFanOutListFailure(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(env.Scheme).WithInterceptorFuncs(interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return faults.ErrInjected
		},
	}).Build()
	mapFn := secrets.SecretRefFanOut(c, func() client.ObjectList { return &corev1.ConfigMapList{} })
	if got := mapFn(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db"}}); got != nil {
		t.Fatalf("requests after a failed List = %v", got)
	}
}
