package katalog

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		CRDSources: []testenv.CRDSource{},
		CRDPaths:   []string{filepath.Join("testdata", "crds")},
	}, &env))
}

// waitTimeout bounds every wait of these tests for the engine to converge.
const waitTimeout = 30 * time.Second

// testOptions are engine options with short retries, so dependency waits end quickly,
// and external calls allowed to loopback, where the tests' httptest servers listen.
func testOptions() EngineOptions {
	o := DefaultEngineOptions()
	o.Outbound = outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}
	o.DependencyRetry = 200 * time.Millisecond
	o.DeletionPoll = 200 * time.Millisecond
	o.HealthWindow = 1
	return o
}

// startEngine starts a manager whose cache sees ns (and extra namespaces) and runs kats on it.
func startEngine(t *testing.T, kats []*Katalog, opts EngineOptions, namespaces ...string) (*Engine, *testenv.RequestCounter) {
	t.Helper()
	defaults := map[string]cache.Config{}
	for _, ns := range namespaces {
		defaults[ns] = cache.Config{}
	}
	mgr, counter := env.StartManager(t, ctrl.Options{Cache: CacheOptions(cache.Options{DefaultNamespaces: defaults}, kats...)})
	e, err := NewEngine(mgr, kats, opts)
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	return e, counter
}

// mustParse parses a Katalog written in a test.
func mustParse(t *testing.T, name, yaml string) *Katalog {
	t.Helper()
	k, err := Parse(name, []byte(yaml))
	if err != nil {
		t.Fatalf("Parse %s: %v", name, err)
	}
	return k
}

// newObject returns a custom resource of kind (platform.io/v1alpha1) with spec.
func newObject(kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion("platform.io/v1alpha1")
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %s: %v", obj.GetName(), err)
	}
}

// eventually polls check until it returns nil, failing the test with its last error.
func eventually(t *testing.T, what string, check func(ctx context.Context) error) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(waitTimeout)
	for {
		err := check(ctx)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// readyCondition returns the Ready condition of the custom resource at obj's key.
func readyCondition(ctx context.Context, obj *unstructured.Unstructured) (*metav1.Condition, error) {
	fresh := obj.DeepCopy()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
		return nil, err
	}
	conds, err := readConditions(fresh)
	if err != nil {
		return nil, err
	}
	for i := range conds {
		if conds[i].Type == "Ready" {
			return &conds[i], nil
		}
	}
	return nil, errNoReady
}

func reconcileRequest(obj client.Object) ctrl.Request {
	return ctrl.Request{NamespacedName: client.ObjectKeyFromObject(obj)}
}

func ctrlOptions(namespaces ...string) ctrl.Options {
	defaults := map[string]cache.Config{}
	for _, ns := range namespaces {
		defaults[ns] = cache.Config{}
	}
	return ctrl.Options{Cache: cache.Options{DefaultNamespaces: defaults}}
}

func markJobComplete(key client.ObjectKey) (*batchv1.Job, error) {
	var job *batchv1.Job
	var err error
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		if job, err = simulate.MarkJobComplete(context.Background(), env.Client, key); err == nil {
			return job, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, err
}
