package inspect_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"

	"github.com/c5c3/reconciler-sdk/katalog"
	"github.com/c5c3/reconciler-sdk/katalog/inspect"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// widgetKatalog runs Widgets: each calls the URL of its spec.url and must get 200.
const widgetKatalog = `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata:
  name: widgets
spec:
  crds:
    widget:
      apiTypes: {group: inspect.katalog.test, version: v1alpha1, kind: Widget, plural: widgets}
      resync: 1s
      operatorBox:
        onReconcile:
          external:
            - {name: check, url: "{{ .spec.url }}", expectedStatus: 200}
`

// EngineHealth reports what the running engine knows, field for field: healthy while the
// Widget's check answers 200, unhealthy with the engine's last error once it fails, and
// an unknown CRD unhealthy with the engine's error; the health route answers 200, then 503.
func TestEngineHealthReportsTheEngine(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	var status atomic.Int32
	status.Store(http.StatusOK)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(int(status.Load()))
	}))
	t.Cleanup(srv.Close)

	kat, err := katalog.Parse("widgets.yaml", []byte(widgetKatalog))
	if err != nil {
		t.Fatal(err)
	}
	kats := []*katalog.Katalog{kat}
	mgr, _ := env.StartManager(t, ctrl.Options{
		Cache:      katalog.CacheOptions(cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}, kats...),
		Controller: config.Controller{SkipNameValidation: new(true)},
	})
	opts := katalog.DefaultEngineOptions()
	opts.HealthWindow = 1
	opts.Outbound = outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes} // srv listens on loopback
	e, err := katalog.NewEngine(mgr, kats, opts)
	if err != nil {
		t.Fatal(err)
	}
	hopts := inspect.DefaultOptions()
	if err := inspect.IndexEvents(ctx, mgr.GetFieldIndexer()); err != nil {
		t.Fatal(err)
	}
	hopts.Reader, hopts.CRDs = mgr.GetCache(), katalog.StartOrder(kats...)
	hopts.Health = inspect.EngineHealth(e)
	h, err := inspect.New(hopts)
	if err != nil {
		t.Fatal(err)
	}

	w := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"url": srv.URL}}}
	w.SetGroupVersionKind(widgetGVK)
	w.SetNamespace(ns)
	w.SetName("checked")
	mustCreate(ctx, t, w)

	source := inspect.EngineHealth(e)
	// matches waits until the adapter's Health equals the engine's and satisfies ok.
	matches := func(what string, ok func(inspect.Health) bool) inspect.Health {
		t.Helper()
		var got inspect.Health
		deadline := time.Now().Add(testenv.ConditionTimeout)
		for {
			eh, err := e.Health("widget")
			if err != nil {
				t.Fatal(err)
			}
			got = source.Health("widget")
			want := inspect.Health{Healthy: eh.Healthy, Synced: eh.Synced, LastError: eh.LastError,
				LastReconcile: eh.LastReconcile, Reconciles: eh.Reconciles, Failures: eh.Failures}
			if got == want && ok(got) {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: adapter %+v, engine %+v", what, got, eh)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	matches("healthy after a reconcile", func(h inspect.Health) bool {
		return h.Healthy && h.Synced && h.Reconciles > 0 && h.Failures == 0 && !h.LastReconcile.IsZero()
	})
	var report inspect.HealthReport
	getJSON(t, h, "/katalog/widget/health", http.StatusOK, &report)
	if !report.Healthy {
		t.Errorf("health route: %+v, want healthy", report)
	}

	status.Store(http.StatusServiceUnavailable)
	failing := matches("unhealthy after a failed check", func(h inspect.Health) bool {
		return !h.Healthy && h.Synced && h.Failures > 0 && h.LastError != ""
	})
	if !strings.Contains(failing.LastError, "check: unexpected status") || strings.Contains(failing.LastError, "503") {
		t.Errorf("LastError %q does not name the call and its unexpected status, or names the status code", failing.LastError)
	}
	report = inspect.HealthReport{}
	getJSON(t, h, "/katalog/widget/health", http.StatusServiceUnavailable, &report)
	if report.Healthy || report.Failures == 0 {
		t.Errorf("health route: %+v, want unhealthy with failures", report)
	}

	unknown := source.Health("gadget")
	if unknown.Healthy || unknown.Synced || !strings.Contains(unknown.LastError, `unknown CRD "gadget"`) {
		t.Errorf("unknown CRD: %+v, want unhealthy, not synced, naming the engine's error", unknown)
	}
}
