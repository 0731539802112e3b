package katalogexamples_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	katalogexamples "github.com/c5c3/reconciler-sdk/examples/katalog"
	"github.com/c5c3/reconciler-sdk/katalog"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// waitFor polls check until it returns nil, failing the test with its last error.
func waitFor(t *testing.T, what string, check func(ctx context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(2 * testenv.ConditionTimeout)
	for {
		err := check(t.Context())
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// statusOf returns status.<field> of the custom resource at u's key.
func statusOf(ctx context.Context, u *unstructured.Unstructured, field string) (string, error) {
	fresh := &unstructured.Unstructured{}
	fresh.SetGroupVersionKind(u.GroupVersionKind())
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), fresh); err != nil {
		return "", err
	}
	s, _, _ := unstructured.NestedString(fresh.Object, "status", field)
	return s, nil
}

// wantStatus returns a check that status.<field> of u is want.
func wantStatus(u *unstructured.Unstructured, field, want string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		got, err := statusOf(ctx, u, field)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("%s %s status.%s is %q, want %q", u.GetKind(), u.GetName(), field, got, want)
		}
		return nil
	}
}

// A Database that leaves phase Ready does not take its Application's running Deployment
// away: the platform Katalog's conditions on the Deployment gate its creation only. The
// Application reports the Database's phase in status.database and phase
// DatabaseNotReady meanwhile, and phase Ready again once the Database is back, with the
// same Deployment throughout.
func TestApplicationKeepsDeploymentWhileDatabaseNotReady(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != katalogexamples.RegistryHost || r.URL.Path != "/v2/nginx/manifests/latest" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(registry.Close)

	kats, err := katalog.LoadAll(katalogexamples.Files...)
	if err != nil {
		t.Fatal(err)
	}
	mgr, _ := env.StartManager(t, ctrl.Options{
		Cache: katalog.CacheOptions(cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}, kats...),
	})
	opts := katalog.DefaultEngineOptions()
	opts.DependencyRetry = 200 * time.Millisecond
	opts.HealthWindow = 1
	// The stand-in listens on loopback, which external calls may not reach by default.
	opts.HTTPClient, err = katalogexamples.StandInClient(registry.URL, outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := katalog.NewEngine(mgr, kats, opts); err != nil {
		t.Fatal(err)
	}

	db := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	db.SetAPIVersion("platform.io/v1alpha1")
	db.SetKind("Database")
	db.SetNamespace(ns)
	db.SetName("shop")
	app := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"image": "nginx"}}}
	app.SetAPIVersion("platform.io/v1alpha1")
	app.SetKind("Application")
	app.SetNamespace(ns)
	app.SetName("shop")
	for _, o := range []*unstructured.Unstructured{db, app} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	dbDeployment := client.ObjectKey{Namespace: ns, Name: "shop-db"}
	appDeployment := client.ObjectKey{Namespace: ns, Name: "shop"}

	// The Database comes up, then the Application's Deployment.
	waitFor(t, "Database Deployment", func(ctx context.Context) error {
		_, err := simulate.MarkDeploymentAvailable(ctx, env.Client, dbDeployment)
		return err
	})
	waitFor(t, "Application Deployment", func(ctx context.Context) error {
		_, err := simulate.MarkDeploymentAvailable(ctx, env.Client, appDeployment)
		return err
	})
	waitFor(t, "Application Ready", wantStatus(app, "phase", "Ready"))
	var dep appsv1.Deployment
	if err := env.Client.Get(ctx, appDeployment, &dep); err != nil {
		t.Fatal(err)
	}
	uid := dep.UID

	// The Database's pods go away: its phase leaves Ready.
	waitFor(t, "Database pods gone", func(ctx context.Context) error {
		var d appsv1.Deployment
		if err := env.Client.Get(ctx, dbDeployment, &d); err != nil {
			return err
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation}
		return env.Client.Status().Update(ctx, &d)
	})
	waitFor(t, "Database Pending", wantStatus(db, "phase", "Pending"))
	// The pass that read the Pending Database ran prune before it wrote the status.
	waitFor(t, "Application sees the Database Pending", wantStatus(app, "database", "Pending"))
	waitFor(t, "Application DatabaseNotReady", wantStatus(app, "phase", "DatabaseNotReady"))
	assertSameDeployment(ctx, t, appDeployment, uid)

	// The Database is back: so is phase Ready, on the same Deployment.
	waitFor(t, "Database Deployment again", func(ctx context.Context) error {
		_, err := simulate.MarkDeploymentAvailable(ctx, env.Client, dbDeployment)
		return err
	})
	waitFor(t, "Application sees the Database Ready", wantStatus(app, "database", "Ready"))
	waitFor(t, "Application Ready again", wantStatus(app, "phase", "Ready"))
	assertSameDeployment(ctx, t, appDeployment, uid)
}

func assertSameDeployment(ctx context.Context, t *testing.T, key client.ObjectKey, uid types.UID) {
	t.Helper()
	var dep appsv1.Deployment
	if err := env.Client.Get(ctx, key, &dep); err != nil {
		t.Fatalf("the Application's Deployment %s: %v", key, err)
	}
	if dep.UID != uid || dep.DeletionTimestamp != nil {
		t.Fatalf("the Application's Deployment %s was replaced or is being deleted", key)
	}
}
