package katalogexamples_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	katalogexamples "github.com/c5c3/reconciler-sdk/examples/katalog"
	"github.com/c5c3/reconciler-sdk/katalog"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// requestLog is an httptest server that records "Host EscapedPath?RawQuery" of each request
// and answers 200.
type requestLog struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newRequestLog(t *testing.T) *requestLog {
	t.Helper()
	l := &requestLog{}
	l.Server = httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.seen = append(l.seen, r.Host+" "+r.URL.EscapedPath()+"?"+r.URL.RawQuery)
	}))
	t.Cleanup(l.Close)
	return l
}

func (l *requestLog) requests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// The registry check of platform.yaml goes to RegistryHost whatever the Application
// says: an Application that sets spec.registryUrl to another server and an image with
// a path, a query and a fragment in it gets a request to the registry with the image
// escaped into one path segment, and the other server gets nothing.
func TestRegistryCheckHostIsFixed(t *testing.T) {
	ns := env.Namespace(t)
	registry, elsewhere := newRequestLog(t), newRequestLog(t)
	kats, err := katalog.LoadAll(katalogexamples.Files...)
	if err != nil {
		t.Fatal(err)
	}
	mgr, _ := env.StartManager(t, ctrl.Options{
		Cache: katalog.CacheOptions(cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}, kats...),
	})
	opts := katalog.DefaultEngineOptions()
	opts.HTTPClient, err = katalogexamples.StandInClient(registry.URL, outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := katalog.NewEngine(mgr, kats, opts); err != nil {
		t.Fatal(err)
	}

	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "platform.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": "hostile", "namespace": ns},
		"spec":     map[string]any{"image": "nginx/../../admin?all=1#x", "registryUrl": elsewhere.URL},
	}}
	if err := env.Client.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	want := katalogexamples.RegistryHost + " /v2/nginx%2F..%2F..%2Fadmin%3Fall%3D1%23x/manifests/latest?"
	deadline := time.Now().Add(testenv.ConditionTimeout)
	for len(registry.requests()) == 0 && len(elsewhere.requests()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the registry check was never made")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := elsewhere.requests(); len(got) != 0 {
		t.Errorf("the server the Application named got %v", got)
	}
	for _, got := range registry.requests() {
		if got != want {
			t.Errorf("the registry got %q, want %q", got, want)
		}
	}
	call := kats[0].Spec.CRDs["application"].OperatorBox.OnCreate.External[0]
	if !strings.HasPrefix(call.URL.Text, "http://"+katalogexamples.RegistryHost+"/") {
		t.Errorf("platform.yaml's %s calls %s, not RegistryHost %s", call.Name, call.URL.Text, katalogexamples.RegistryHost)
	}
}
