package katalog

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

var errNoReady = errors.New("no Ready condition yet")

// waitReady waits until obj's Ready condition has status and reason for its current generation.
func waitReady(t *testing.T, obj *unstructured.Unstructured, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	var got *metav1.Condition
	eventually(t, fmt.Sprintf("%s %s Ready %s/%s", obj.GetKind(), obj.GetName(), status, reason), func(ctx context.Context) error {
		c, err := readyCondition(ctx, obj)
		if err != nil {
			return err
		}
		if c.Status != status || c.Reason != reason {
			return fmt.Errorf("Ready is %s/%s: %s", c.Status, c.Reason, c.Message)
		}
		got = c
		return nil
	})
	return got
}

func loadPlatform(t *testing.T) []*Katalog {
	t.Helper()
	kats, err := LoadAll(filepath.Join("testdata", "platform.yaml"), filepath.Join("testdata", "database.yaml"))
	if err != nil {
		t.Fatalf("LoadAll: %v", err)
	}
	return kats
}

// registry stands in for the image registry the platform Katalog checks: it answers
// status to GET /v2/<image>/manifests/latest and counts the calls.
func registry(t *testing.T, status *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/nginx/manifests/latest" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.WriteHeader(int(status.Load()))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func getDeployment(ctx context.Context, ns, name string) (*appsv1.Deployment, error) {
	dep := &appsv1.Deployment{}
	return dep, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, dep)
}

func secretValue(t *testing.T, ns, name, key string) string {
	t.Helper()
	var out string
	eventually(t, "Secret "+name, func(ctx context.Context) error {
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
			return err
		}
		out = string(s.Data[key])
		return nil
	})
	return out
}

// TestPlatformConverges runs the platform and database Katalogs: the Application's
// Deployment appears only once its Database is Ready and the registry answers 200, its
// status reaches phase Ready, a converged pass sends no request, drift is repaired and
// the once Secrets survive a new engine.
func TestPlatformConverges(t *testing.T) {
	ns := env.Namespace(t)
	var status atomic.Int32
	status.Store(http.StatusOK)
	srv := registry(t, &status)
	kats := loadPlatform(t)

	mgr, counter, stop, err := env.RunManager(ctrl.Options{Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = stop()
		}
	})
	eng, err := NewEngine(mgr, kats, testOptions())
	if err != nil {
		t.Fatal(err)
	}

	app := newObject("Application", ns, "my-app", map[string]any{"image": "nginx", "registryUrl": srv.URL})
	create(t, app)
	db := newObject("Database", ns, "my-app", map[string]any{})
	create(t, db)

	// The Application waits for its Database: no Deployment before the Database is Ready.
	waitReady(t, db, metav1.ConditionTrue, ReasonReconciled)
	password := secretValue(t, ns, "my-app-credentials", "password")
	if len(password) != 32 {
		t.Fatalf("generated password has %d characters, want 32", len(password))
	}
	dbPassword := secretValue(t, ns, "my-app-db", "password")
	if _, err := getDeployment(context.Background(), ns, "my-app"); err == nil {
		t.Fatal("Application Deployment exists before the Database is Ready")
	}

	// The mutation default was applied to the Application's spec.
	eventually(t, "spec.replicas defaulted", func(ctx context.Context) error {
		fresh := app.DeepCopy()
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(app), fresh); err != nil {
			return err
		}
		if v, _, _ := unstructured.NestedInt64(fresh.Object, "spec", "replicas"); v != 2 {
			return fmt.Errorf("spec.replicas is %v", fresh.Object["spec"])
		}
		return nil
	})

	if _, err := simulate.MarkDeploymentAvailable(context.Background(), env.Client, client.ObjectKey{Namespace: ns, Name: "my-app-db"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Application Deployment", func(ctx context.Context) error {
		dep, err := getDeployment(ctx, ns, "my-app")
		if err != nil {
			return err
		}
		if img := dep.Spec.Template.Spec.Containers[0].Image; img != "nginx" {
			return fmt.Errorf("image %q", img)
		}
		return nil
	})
	if _, err := simulate.MarkDeploymentAvailable(context.Background(), env.Client, client.ObjectKey{Namespace: ns, Name: "my-app"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Application status.phase Ready", func(ctx context.Context) error {
		fresh := app.DeepCopy()
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(app), fresh); err != nil {
			return err
		}
		if phase, _, _ := unstructured.NestedString(fresh.Object, "status", "phase"); phase != "Ready" {
			return fmt.Errorf("status %v", fresh.Object["status"])
		}
		return nil
	})
	waitReady(t, app, metav1.ConditionTrue, ReasonReconciled)

	// A converged pass reads its custom resource, its cross reference and its children
	// from the cache and writes nothing: no request at all.
	eventually(t, "a converged pass sends no request", func(ctx context.Context) error {
		counter.Reset()
		if _, err := eng.recs["application"].Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(app)}); err != nil {
			return err
		}
		if n := counter.Total(); n != 0 {
			return fmt.Errorf("the pass sent %d requests (%d writes)", n, counter.Writes())
		}
		return nil
	})

	// Drift of an onReconcile object is repaired on the next pass.
	dep, err := getDeployment(context.Background(), ns, "my-app-db")
	if err != nil {
		t.Fatal(err)
	}
	dep.Spec.Template.Spec.Containers[0].Image = "postgres:drifted"
	if err := env.Client.Update(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
	eventually(t, "drift repaired", func(ctx context.Context) error {
		dep, err := getDeployment(ctx, ns, "my-app-db")
		if err != nil {
			return err
		}
		if img := dep.Spec.Template.Spec.Containers[0].Image; img != "postgres:17" {
			return fmt.Errorf("image %q", img)
		}
		return nil
	})

	// A new engine on the same cluster keeps the once Secrets.
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	eng2, _ := startEngine(t, kats, testOptions(), ns)
	eventually(t, "the new engine reconciled", func(ctx context.Context) error {
		h, err := eng2.Health("application")
		if err != nil {
			return err
		}
		if h.Reconciles == 0 || h.Failures > 0 {
			return fmt.Errorf("health %+v", h)
		}
		return nil
	})
	if got := secretValue(t, ns, "my-app-credentials", "password"); got != password {
		t.Error("the Application's once Secret was regenerated by the new engine")
	}
	if got := secretValue(t, ns, "my-app-db", "password"); got != dbPassword {
		t.Error("the Database's once Secret was regenerated by the new engine")
	}
}
