package secrets_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
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
	"github.com/c5c3/reconciler-sdk/testenv"
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

// TestWatchesOnAPlainBuilder runs a single-cluster manager whose controller, built with
// a plain ctrl builder, has only WatchStores and WatchSecrets: each store and Secret
// event enqueues exactly the stand-in CRs (ConfigMaps) that select that store or read
// that Secret.
func TestWatchesOnAPlainBuilder(t *testing.T) {
	cases := map[string]struct {
		reason          string
		namespaceScoped bool
		// want lists the CRs enqueued, as "<ns index>/<name>".
		want []string
	}{
		"ClusterWide": {
			reason: "Both store legs and the Secret leg enqueue their CRs.",
			want:   []string{"0/eu-a", "0/reader", "0/tenant-a", "1/eu-b"},
		},
		"NamespaceScoped": {
			reason:          "No ClusterSecretStore leg: the SecretStore and Secret legs only.",
			namespaceScoped: true,
			want:            []string{"0/reader", "0/tenant-a"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			nss := []string{env.Namespace(t), env.Namespace(t)}
			euStore := clusterName("plain-eu")
			createCR(t, nss[0], "eu-a", &commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: euStore})
			createCR(t, nss[1], "eu-b", &commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: euStore})
			createCR(t, nss[0], "tenant-a", &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"})
			createCR(t, nss[1], "tenant-b", &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"})
			createCR(t, nss[0], "shared", nil)
			reader := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: nss[0], Name: "reader"},
				Data: map[string]string{"secret": "db"}}
			if err := env.Client.Create(context.Background(), reader); err != nil {
				t.Fatal(err)
			}

			mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Logger: logr.Discard(),
				Metrics:    metricsserver.Options{BindAddress: "0"},
				Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
			if err != nil {
				t.Fatal(err)
			}
			if err := secrets.IndexSecretRefs(context.Background(), mgr.GetFieldIndexer(), &corev1.ConfigMap{},
				func(cm *corev1.ConfigMap) []string { return []string{cm.Data["secret"]} }); err != nil {
				t.Fatal(err)
			}
			b, err := secrets.WatchStores(builder.ControllerManagedBy(mgr).Named("plain"), mgr.GetClient(), tc.namespaceScoped, configMapFanOut)
			if err != nil {
				t.Fatal(err)
			}
			b, err = secrets.WatchSecrets(b, secrets.SecretRefFanOut(mgr.GetClient(), func() client.ObjectList { return &corev1.ConfigMapList{} }))
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			got := map[string]bool{}
			index := map[string]string{nss[0]: "0", nss[1]: "1"}
			err = b.Complete(crreconcile.Func(func(_ context.Context, req crreconcile.Request) (ctrl.Result, error) {
				if i, ok := index[req.Namespace]; ok { // other tests' stores enqueue their own CRs
					mu.Lock()
					got[i+"/"+req.Name] = true
					mu.Unlock()
				}
				return ctrl.Result{}, nil
			}))
			if err != nil {
				t.Fatal(err)
			}
			ctx := testenv.Go(t, mgr.Start)
			if !mgr.GetCache().WaitForCacheSync(ctx) {
				t.Fatal("cache did not sync")
			}
			createClusterStore(t, euStore, false)
			createStore(t, nss[0], "tenant-bao", false)
			for _, name := range []string{"db", "unread"} {
				if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: nss[0], Name: name}}); err != nil {
					t.Fatal(err)
				}
			}
			snapshot := func() []string {
				mu.Lock()
				defer mu.Unlock()
				out := make([]string, 0, len(got))
				for k := range got {
					out = append(out, k)
				}
				sort.Strings(out)
				return out
			}
			if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true,
				func(context.Context) (bool, error) { return len(snapshot()) >= len(tc.want), nil }); err != nil {
				t.Fatalf("%s\nenqueued %v, want %v", tc.reason, snapshot(), tc.want)
			}
			time.Sleep(500 * time.Millisecond) // a wrong request would have been mapped by now
			if diff := cmp.Diff(tc.want, snapshot()); diff != "" {
				t.Errorf("%s\nenqueued (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func TestWatchesOnAPlainBuilderRefuse(t *testing.T) {
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	mapFn := func(context.Context, client.Object) []crreconcile.Request { return nil }
	cases := map[string]struct {
		reason string
		call   func() (*builder.Builder, error)
		want   error
	}{
		"StoresNilBuilder": {
			reason: "A nil builder is refused.",
			call:   func() (*builder.Builder, error) { return secrets.WatchStores(nil, env.Client, false, configMapFanOut) },
			want:   secrets.ErrNilBuilder,
		},
		"StoresNilMapper": {
			reason: "A nil mapper is refused with the error AddStoreWatches returns.",
			call: func() (*builder.Builder, error) {
				return secrets.WatchStores(builder.ControllerManagedBy(mgr), env.Client, false, nil)
			},
			want: secrets.ErrNilStoreMapper,
		},
		"SecretsNilBuilder": {
			reason: "A nil builder is refused.",
			call:   func() (*builder.Builder, error) { return secrets.WatchSecrets(nil, mapFn) },
			want:   secrets.ErrNilBuilder,
		},
		"SecretsNilMapFunc": {
			reason: "A nil map function is refused with the error AddSecretWatches returns.",
			call:   func() (*builder.Builder, error) { return secrets.WatchSecrets(builder.ControllerManagedBy(mgr), nil) },
			want:   secrets.ErrNilSecretMapper,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := tc.call()
			if b != nil || !errors.Is(err, tc.want) {
				t.Errorf("%s\n= %v, %v; want nil, %v", tc.reason, b, err, tc.want)
			}
		})
	}
}
