package inspect_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/c5c3/reconciler-sdk/katalog"
	"github.com/c5c3/reconciler-sdk/katalog/inspect"
)

// engineHealth stands in for the engine's HealthSource.
type engineHealth map[string]inspect.Health

func (e engineHealth) Health(crd string) inspect.Health { return e[crd] }

// The inspector serves a Katalog entry and its health as JSON. Here a fake client
// stands in for the manager's cache; in an operator, Reader is mgr.GetCache(), which
// also serves the events once IndexEvents has indexed them, and NewServer serves the
// handler on the loopback interface.
func Example() {
	gvk := schema.GroupVersionKind{Group: "platform.io", Version: "v1alpha1", Kind: "Application"}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	scheme.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
	scheme.AddKnownTypeWithName(gvk.GroupVersion().WithKind("ApplicationList"), &unstructured.UnstructuredList{})
	c := fake.NewClientBuilder().WithScheme(scheme).Build()

	opts := inspect.DefaultOptions()
	opts.Reader = c
	opts.CRDs = []*katalog.CRD{{
		Name:     "application",
		APITypes: katalog.APITypes{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Plural: "applications"},
		Workers:  4,
	}}
	opts.Health = engineHealth{"application": {
		Synced: true, LastError: "Application shop/web: spec.image: missing", Reconciles: 3, Failures: 3,
		LastReconcile: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
	}}
	h, err := inspect.New(opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	for _, path := range []string{"/katalog/application", "/katalog/application/health", "/katalog/nope/cr"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			fmt.Println(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		fmt.Printf("GET %s: %d\n%s", path, resp.StatusCode, body)
	}
	// Output:
	// GET /katalog/application: 200
	// {
	//   "name": "application",
	//   "group": "platform.io",
	//   "version": "v1alpha1",
	//   "kind": "Application",
	//   "plural": "applications",
	//   "workers": 4,
	//   "resync": "15s",
	//   "health": {
	//     "healthy": false,
	//     "synced": true,
	//     "lastError": "Application shop/web: spec.image: missing",
	//     "lastReconcile": "2026-03-01T12:00:00Z",
	//     "reconciles": 3,
	//     "failures": 3
	//   }
	// }
	// GET /katalog/application/health: 503
	// {
	//   "crd": "application",
	//   "healthy": false,
	//   "synced": true,
	//   "lastError": "Application shop/web: spec.image: missing",
	//   "lastReconcile": "2026-03-01T12:00:00Z",
	//   "reconciles": 3,
	//   "failures": 3
	// }
	// GET /katalog/nope/cr: 404
	// {
	//   "error": "unknown CRD \"nope\""
	// }
}
