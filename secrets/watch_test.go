package secrets_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/secrets"
)

func TestAddStoreWatchesRefusesANilMapper(t *testing.T) {
	mgr, err := multicluster.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"}}, multicluster.ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	targets := func(context.Context, client.ObjectKey) (string, bool) { return "", true }
	b, err := secrets.AddStoreWatches(mcbuilder.ControllerManagedBy(mgr), env.Scheme, targets, false, env.Client, nil)
	if b != nil || err == nil || err.Error() != "secrets: store watch mapper must not be nil" || !errors.Is(err, secrets.ErrNilStoreMapper) {
		t.Fatalf("AddStoreWatches(nil mapper) = %v, %v", b, err)
	}

	// A scheme without the ESO kinds: AddInputWatch's error comes back unchanged.
	mapper := func(client.Reader, commonv1.SecretStoreRefKind) handler.MapFunc {
		return func(context.Context, client.Object) []crreconcile.Request { return nil }
	}
	b, err = secrets.AddStoreWatches(mcbuilder.ControllerManagedBy(mgr), runtime.NewScheme(), targets, false, env.Client, mapper)
	if b != nil || err == nil || !strings.HasPrefix(err.Error(), "resolving input kind for remote watch: ") {
		t.Fatalf("AddStoreWatches(scheme without ESO) = %v, %v", b, err)
	}
}

// TestAddStoreWatchesLegs runs a manager whose only watches are the store legs and
// records what each store event enqueues.
func TestAddStoreWatchesLegs(t *testing.T) {
	for _, namespaceScoped := range []bool{false, true} {
		name := "cluster-wide"
		if namespaceScoped {
			name = "namespace-scoped"
		}
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			var mu sync.Mutex
			got := map[string]bool{}
			// The mapper enqueues a request named after the store's kind and name, so
			// that the test sees which leg fired; every CR is on the management cluster.
			mapper := func(_ client.Reader, kind commonv1.SecretStoreRefKind) handler.MapFunc {
				return func(_ context.Context, store client.Object) []crreconcile.Request {
					return []crreconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ns, Name: string(kind) + "." + store.GetName()}}}
				}
			}
			targets := func(context.Context, client.ObjectKey) (string, bool) { return "", true }
			opts := ctrl.Options{Scheme: env.Scheme, Logger: logr.Discard(),
				Metrics:    metricsserver.Options{BindAddress: "0"},
				Controller: config.Controller{SkipNameValidation: ptr.To(true)}}
			mgr, err := multicluster.NewManager(env.Config, opts, multicluster.ManagerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := secrets.AddStoreWatches(mcbuilder.ControllerManagedBy(mgr).Named("stores").
				WithOptions(controller.TypedOptions[mcreconcile.Request]{SkipNameValidation: ptr.To(true)}), env.Scheme, targets,
				namespaceScoped, mgr.GetLocalManager().GetClient(), mapper)
			if err != nil {
				t.Fatal(err)
			}
			err = b.Complete(multicluster.LocalReconciler(crreconcile.Func(func(_ context.Context, req crreconcile.Request) (ctrl.Result, error) {
				mu.Lock()
				defer mu.Unlock()
				got[req.Name] = true
				return ctrl.Result{}, nil
			})))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- mgr.Start(ctx) }()
			t.Cleanup(func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("manager: %v", err)
				}
			})

			css := clusterName("watched")
			createClusterStore(t, css, false)
			createStore(t, ns, "team-store", false)
			seen := func(key string) bool {
				mu.Lock()
				defer mu.Unlock()
				return got[key]
			}
			if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true,
				func(context.Context) (bool, error) { return seen("SecretStore.team-store"), nil }); err != nil {
				t.Fatal("the SecretStore leg enqueued nothing")
			}
			if namespaceScoped {
				// The SecretStore event has arrived; a ClusterSecretStore event would have
				// been delivered through the same queue by now had its leg existed.
				time.Sleep(time.Second)
				if seen("ClusterSecretStore." + css) {
					t.Fatal("a namespace-scoped operator registered the ClusterSecretStore leg")
				}
				return
			}
			if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true,
				func(context.Context) (bool, error) { return seen("ClusterSecretStore." + css), nil }); err != nil {
				t.Fatal("the ClusterSecretStore leg enqueued nothing")
			}
		})
	}
}
