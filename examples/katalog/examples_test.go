package katalogexamples_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	katalogexamples "github.com/c5c3/reconciler-sdk/examples/katalog"
	"github.com/c5c3/reconciler-sdk/katalog"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		CRDSources: []testenv.CRDSource{},
		CRDPaths:   []string{katalogexamples.CRDDir},
	}, &env))
}

// The example files load as cmd/katalog loads them (paths relative to the working
// directory), Load finds the same CRD entries through Dir, every entry has its CRD in crds/ (group, kind, plural and a
// served version with the status subresource), and every sample is of a kind a Katalog
// runs.
func TestExamplesLoadAndMatchTheirCRDs(t *testing.T) {
	fromDisk, err := katalog.LoadAll(katalogexamples.Files...)
	if err != nil {
		t.Fatalf("LoadAll %v: %v", katalogexamples.Files, err)
	}
	dir, err := katalogexamples.Dir()
	if err != nil {
		t.Fatal(err)
	}
	viaDir, err := katalogexamples.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := func(kats []*katalog.Katalog) []string {
		var out []string
		for _, c := range katalog.StartOrder(kats...) {
			out = append(out, c.Name)
		}
		return out
	}
	if got, want := names(viaDir), names(fromDisk); !slices.Equal(got, want) || len(got) != 3 {
		t.Fatalf("CRD entries through Dir %v, from the working directory %v; want the same three", got, want)
	}

	crds, err := katalogexamples.CRDs(dir)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, c := range katalog.StartOrder(fromDisk...) {
		at := c.APITypes
		kinds[at.Kind] = true
		found := false
		for _, crd := range crds {
			if crd.Spec.Group != at.Group || crd.Spec.Names.Kind != at.Kind || crd.Spec.Names.Plural != at.Plural {
				continue
			}
			for _, v := range crd.Spec.Versions {
				found = found || (v.Name == at.Version && v.Served && v.Subresources != nil && v.Subresources.Status != nil)
			}
		}
		if !found {
			t.Errorf("CRD entry %s (%s/%s %s, plural %s) has no served CRD version with a status subresource in crds/",
				c.Name, at.Group, at.Version, at.Kind, at.Plural)
		}
	}
	samples, err := katalogexamples.Samples(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 3 {
		t.Errorf("%d samples, want one per kind (3)", len(samples))
	}
	for _, s := range samples {
		if !kinds[s.GetKind()] || s.GroupVersionKind().Group != "platform.io" {
			t.Errorf("sample %s %s is of no kind the Katalogs run", s.GetKind(), s.GetName())
		}
	}
}

// The samples, created in a namespace with a server of the test playing the registry
// (RegistryHost, through StandInClient), converge under the engine: the Database and its Deployment first, then the
// Application's Deployment, the RegionalApp's four Deployments; every sample ends Ready
// True with status.phase Ready once the Deployments are available.
func TestSamplesConverge(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	var checks atomic.Int32
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != katalogexamples.RegistryHost || r.URL.Path != "/v2/nginx/manifests/latest" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		checks.Add(1)
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

	samples, err := katalogexamples.Samples(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		s.SetNamespace(ns)
		if err := env.Client.Create(ctx, s); err != nil {
			t.Fatalf("create %s %s/%s: %v", s.GetKind(), ns, s.GetName(), err)
		}
	}

	// No Deployment controller runs on envtest: play it, making each Deployment available.
	deadline := time.Now().Add(2 * testenv.ConditionTimeout)
	for {
		markAvailable(ctx, t, ns)
		pending := notReady(ctx, t, samples)
		if len(pending) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("samples not converged: %v", pending)
		}
		time.Sleep(200 * time.Millisecond)
	}

	want := []string{"edge-a", "edge-b", "edge-eu-west-1", "edge-us-east-1", "shop", "shop-db"}
	var deps appsv1.DeploymentList
	if err := env.Client.List(ctx, &deps, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var got []string
	replicas := map[string]int32{}
	for _, d := range deps.Items {
		got = append(got, d.Name)
		replicas[d.Name] = *d.Spec.Replicas
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("Deployments %v, want %v", got, want)
	}
	if replicas["edge-b"] != 2 || replicas["edge-a"] != 1 {
		t.Errorf("replicas edge-a %d, edge-b %d; want 1 and 2", replicas["edge-a"], replicas["edge-b"])
	}
	if checks.Load() == 0 {
		t.Error("the registry was never asked for nginx")
	}
}

// markAvailable marks every Deployment of ns available that is not yet.
func markAvailable(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	var deps appsv1.DeploymentList
	if err := env.Client.List(ctx, &deps, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, d := range deps.Items {
		if d.Status.ReadyReplicas > 0 {
			continue
		}
		if _, err := simulate.MarkDeploymentAvailable(ctx, env.Client, client.ObjectKeyFromObject(&d)); err != nil {
			t.Fatal(err)
		}
	}
}

// notReady describes the samples whose Ready is not True or whose phase is not Ready.
func notReady(ctx context.Context, t *testing.T, samples []*unstructured.Unstructured) []string {
	t.Helper()
	var out []string
	for _, s := range samples {
		fresh := &unstructured.Unstructured{}
		fresh.SetGroupVersionKind(s.GroupVersionKind())
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(s), fresh); err != nil {
			t.Fatal(err)
		}
		phase, _, _ := unstructured.NestedString(fresh.Object, "status", "phase")
		ready := readyOf(fresh)
		if ready == nil || ready.Status != metav1.ConditionTrue || phase != "Ready" {
			out = append(out, fmt.Sprintf("%s %s: phase %q, Ready %+v", s.GetKind(), s.GetName(), phase, ready))
		}
	}
	return out
}

// readyOf returns the Ready condition of a custom resource, nil when it has none.
func readyOf(u *unstructured.Unstructured) *metav1.Condition {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Ready" {
			continue
		}
		status, _ := m["status"].(string)
		reason, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		return &metav1.Condition{Type: "Ready", Status: metav1.ConditionStatus(status), Reason: reason, Message: msg}
	}
	return nil
}
