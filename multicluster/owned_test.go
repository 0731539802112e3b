package multicluster_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/httproute"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// The management cluster of this package serves ConfigMaps but not the Gateway API:
// AddOwnedWatches watches the one, reports the other, and an edit of an owned
// ConfigMap enqueues its Gadget.
func TestAddOwnedWatches(t *testing.T) {
	ns := env.Namespace(t)
	mgr := localManager(t)
	b := mcbuilder.ControllerManagedBy(mgr).Named("owned").
		For(&Gadget{}, mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false)).
		WithOptions(controller.TypedOptions[mcreconcile.Request]{SkipNameValidation: ptr.To(true)})
	b, notServed, err := multicluster.AddOwnedWatches(b, env.Scheme, mgr.GetLocalManager().GetRESTMapper(),
		&corev1.ConfigMap{}, &gatewayv1.HTTPRoute{})
	if err != nil {
		t.Fatal(err)
	}
	want := []schema.GroupVersionKind{httproute.GVK}
	if len(notServed) != 1 || notServed[0] != want[0] {
		t.Fatalf("notServed = %v, want %v", notServed, want)
	}
	var mu sync.Mutex
	reconciled := 0
	err = b.Complete(multicluster.LocalReconciler(crreconcile.Func(func(_ context.Context, req crreconcile.Request) (ctrl.Result, error) {
		if req.Namespace == ns && req.Name == "owner" {
			mu.Lock()
			reconciled++
			mu.Unlock()
		}
		return ctrl.Result{}, nil
	})))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testenv.Go(t, mgr.Start)
	count := func() int { mu.Lock(); defer mu.Unlock(); return reconciled }

	g := &Gadget{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := env.Client.Create(ctx, g); err != nil {
		t.Fatal(err)
	}
	poll := func(what string, cond func() bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true,
			func(context.Context) (bool, error) { return cond(), nil }); err != nil {
			t.Fatalf("%s: not within 30s", what)
		}
	}
	poll("the Gadget is reconciled", func() bool { return count() > 0 })
	time.Sleep(200 * time.Millisecond) // let the create's events settle
	before := count()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns}}
	if err := controllerutil.SetControllerReference(g, cm, env.Scheme); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	poll("an owned ConfigMap enqueues its Gadget", func() bool { return count() > before })
}

// failingMapper answers every question with a discovery failure.
type failingMapper struct{ meta.RESTMapper }

func (failingMapper) RESTMapping(schema.GroupKind, ...string) (*meta.RESTMapping, error) {
	return nil, errors.New("discovery: connection refused")
}

func TestAddOwnedWatchesRefusesBadInput(t *testing.T) {
	mgr := localManager(t)
	mapper := mgr.GetLocalManager().GetRESTMapper()
	b := mcbuilder.ControllerManagedBy(mgr)
	if _, _, err := multicluster.AddOwnedWatches(nil, env.Scheme, mapper, &corev1.ConfigMap{}); !errors.Is(err, multicluster.ErrInvalidOptions) {
		t.Errorf("nil builder: %v", err)
	}
	if _, _, err := multicluster.AddOwnedWatches(b, env.Scheme, nil, &corev1.ConfigMap{}); !errors.Is(err, multicluster.ErrInvalidOptions) {
		t.Errorf("nil mapper: %v", err)
	}
	if _, _, err := multicluster.AddOwnedWatches(b, nil, mapper, &corev1.ConfigMap{}); !errors.Is(err, apply.ErrNilScheme) {
		t.Errorf("nil scheme: %v", err)
	}
	if _, _, err := multicluster.AddOwnedWatches(b, runtime.NewScheme(), mapper, &corev1.ConfigMap{}); err == nil ||
		!strings.HasPrefix(err.Error(), "resolving owned kind: ") {
		t.Errorf("unknown kind: %v", err)
	}
	got, notServed, err := multicluster.AddOwnedWatches(b, env.Scheme, failingMapper{mapper}, &corev1.ConfigMap{})
	if got != nil || notServed != nil || err == nil || !strings.Contains(err.Error(), "asking the management cluster for ConfigMap") {
		t.Errorf("discovery failure = %v, %v, %v", got, notServed, err)
	}
}
