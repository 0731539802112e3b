package secrets_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// ConfigMaps stand in for CRs that read the Secret and select the SecretStore named in
// their data: AddCRInputWatches enqueues the readers of a Secret and the CRs of a store,
// each only in its namespace.
func TestAddCRInputWatches(t *testing.T) {
	ns, elsewhere := env.Namespace(t), env.Namespace(t)
	for _, cm := range []struct{ ns, name, secret, store string }{
		{ns, "reads-db", "db", "other"}, {ns, "uses-vault", "tls", "vault"}, {elsewhere, "far", "db", "vault"},
	} {
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cm.ns, Name: cm.name},
			Data: map[string]string{"secret": cm.secret, "store": cm.store}}
		if err := env.Client.Create(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
	mgr, err := multicluster.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Logger: logr.Discard(),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}}, multicluster.ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := mcbuilder.ControllerManagedBy(mgr).Named("cr-inputs").
		WithOptions(controller.TypedOptions[mcreconcile.Request]{SkipNameValidation: ptr.To(true)})
	targets := func(context.Context, client.ObjectKey) (string, bool) { return "", true }
	b, err = secrets.AddCRInputWatches(context.Background(), b, mgr, targets, &corev1.ConfigMap{}, secrets.CRInputs[*corev1.ConfigMap]{
		NewList:         func() client.ObjectList { return &corev1.ConfigMapList{} },
		SecretRefs:      func(cm *corev1.ConfigMap) []string { return []string{cm.Data["secret"]} },
		NamespaceScoped: true, // no ClusterSecretStore watch: the shared stores of other tests stay out
		StoreRef: func(cm *corev1.ConfigMap) *commonv1.SecretStoreRefSpec {
			return &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: cm.Data["store"]}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got enqueued
	err = b.Complete(multicluster.LocalReconciler(got.reconciler()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testenv.Go(t, mgr.Start)
	if !mgr.GetLocalManager().GetCache().WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}); err != nil {
		t.Fatal(err)
	}
	store := &esov1.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vault"},
		Spec: esov1.SecretStoreSpec{Provider: &apiextensionsv1.JSON{Raw: []byte(`{"vault":{"server":"http://vault:8200"}}`)}}}
	if err := env.Client.Create(ctx, store); err != nil {
		t.Fatal(err)
	}
	snapshot := func() []string { return got.in(true, ns, elsewhere) }
	want := []string{ns + "/reads-db", ns + "/uses-vault"}
	testenv.Eventually(t, 30*time.Second, "the Secret's reader and the store's user enqueued", func(context.Context) (bool, error) {
		return len(snapshot()) >= len(want), nil
	})
	time.Sleep(300 * time.Millisecond) // a request for another namespace would have come by now
	if d := cmp.Diff(want, snapshot()); d != "" {
		t.Fatalf("enqueued (-want +got):\n%s", d)
	}
}

// CRInputs without NewList or StoreRef are refused before anything is registered.
func TestAddCRInputWatchesRefusesIncompleteInputs(t *testing.T) {
	mgr, err := multicluster.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"}}, multicluster.ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	targets := func(context.Context, client.ObjectKey) (string, bool) { return "", true }
	b, err := secrets.AddCRInputWatches(context.Background(), mcbuilder.ControllerManagedBy(mgr), mgr, targets,
		&corev1.ConfigMap{}, secrets.CRInputs[*corev1.ConfigMap]{NewList: func() client.ObjectList { return &corev1.ConfigMapList{} }})
	if b != nil || !errors.Is(err, secrets.ErrInvalidInputs) {
		t.Fatalf("AddCRInputWatches without StoreRef = %v, %v; want ErrInvalidInputs", b, err)
	}
}
