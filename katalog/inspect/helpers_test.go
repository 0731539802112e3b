package inspect_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/katalog"
	"github.com/c5c3/reconciler-sdk/katalog/inspect"
)

// now is the fixed clock of the fake-client tests.
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var widgetGVK = schema.GroupVersionKind{Group: "inspect.katalog.test", Version: "v1alpha1", Kind: "Widget"}

// widgetCRD is the Katalog entry of the test CRD (testdata/widget-crd.yaml).
func widgetCRD() *katalog.CRD {
	return &katalog.CRD{
		Name:      "widget",
		APITypes:  katalog.APITypes{Group: widgetGVK.Group, Version: widgetGVK.Version, Kind: widgetGVK.Kind, Plural: "widgets"},
		Workers:   2,
		Resync:    katalog.Duration{Duration: 30 * time.Second},
		DependsOn: map[string]katalog.DependencyCondition{"database": katalog.DependencyHealthy},
	}
}

// databaseCRD is a second entry, with no custom resources.
func databaseCRD() *katalog.CRD {
	return &katalog.CRD{
		Name:     "database",
		APITypes: katalog.APITypes{Group: widgetGVK.Group, Version: widgetGVK.Version, Kind: "Database", Plural: "databases"},
	}
}

// healthMap is a HealthSource backed by a map; unknown CRDs are unhealthy.
type healthMap struct {
	mu sync.Mutex
	m  map[string]inspect.Health
}

func (h *healthMap) Health(crd string) inspect.Health {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m[crd]
}

func newHealth() *healthMap {
	return &healthMap{m: map[string]inspect.Health{
		"widget":   {Healthy: true, Synced: true, LastReconcile: now.Add(-30 * time.Second), Reconciles: 42, Failures: 1},
		"database": {Synced: true, LastError: "Database shop/db: dial tcp: connection refused", Reconciles: 7, Failures: 7},
	}}
}

// testScheme knows the client-go types, and Widget and Database as unstructured kinds.
func testScheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"Widget", "Database"} {
		gv := widgetGVK.GroupVersion()
		s.AddKnownTypeWithName(gv.WithKind(kind), &unstructured.Unstructured{})
		s.AddKnownTypeWithName(gv.WithKind(kind+"List"), &unstructured.UnstructuredList{})
	}
	return s
}

// widget builds a Widget custom resource.
func widget(ns, name string, uid types.UID, generation int64, created time.Time, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"image": "nginx"}}}
	u.SetGroupVersionKind(widgetGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetUID(uid)
	u.SetGeneration(generation)
	u.SetCreationTimestamp(metav1.NewTime(created))
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func controlledBy(uid types.UID, name string) []metav1.OwnerReference {
	return []metav1.OwnerReference{{
		APIVersion: widgetGVK.GroupVersion().String(), Kind: widgetGVK.Kind, Name: name, UID: uid,
		Controller: new(true), BlockOwnerDeletion: new(true),
	}}
}

func objectMeta(ns, name string, created time.Time, owners []metav1.OwnerReference) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(created), OwnerReferences: owners}
}

func event(ns, name string, uid types.UID, typ, reason, msg string, count int32, last time.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: name},
		InvolvedObject: corev1.ObjectReference{Kind: widgetGVK.Kind, Namespace: ns, Name: "web", UID: uid},
		Type:           typ, Reason: reason, Message: msg, Count: count,
		Source:        corev1.EventSource{Component: "katalog"},
		LastTimestamp: metav1.NewTime(last),
	}
}

// world is the fixture of the fake-client tests: Widget shop/web, Ready, with two
// Deployments (one available, one not), a Service, a Secret and a completed Job it
// controls; objects it does not control (no owner, another controller, a non-controller
// owner reference, another namespace); two events about it and one about another
// object; and Widget dev/api, waiting for a dependency.
func world() []client.Object {
	webUID := types.UID("uid-web")
	web := widget("shop", "web", webUID, 3, now.Add(-2*time.Hour), map[string]any{
		"phase":              "Ready",
		"observedGeneration": int64(3),
		"endpoint":           "web.shop.svc:80",
		"replicas":           map[string]any{"desired": int64(2), "ready": int64(2)},
		"message":            "<script>alert(1)</script>",
		"regions":            []any{"eu", "us"},
		"conditions": []any{
			map[string]any{"type": "Ready", "status": "True", "reason": "Reconciled", "message": "all children are ready",
				"observedGeneration": int64(3), "lastTransitionTime": now.Add(-5 * time.Minute).Format(time.RFC3339)},
			map[string]any{"type": "DatabaseReady", "status": "False", "reason": "Pending", "message": "<b>waiting</b> for db",
				"observedGeneration": int64(3), "lastTransitionTime": now.Add(-time.Hour).Format(time.RFC3339)},
		},
	})
	api := widget("dev", "api", "uid-api", 2, now.Add(-72*time.Hour), map[string]any{
		"conditions": []any{
			map[string]any{"type": "Ready", "status": "False", "reason": "WaitingForDependency", "observedGeneration": int64(1)},
		},
	})
	owned := controlledBy(webUID, "web")
	created := now.Add(-90 * time.Minute)
	return []client.Object{
		web, api,
		&appsv1.Deployment{ObjectMeta: objectMeta("shop", "web", created, owned),
			Spec: appsv1.DeploymentSpec{Replicas: new(int32(2))}, Status: appsv1.DeploymentStatus{AvailableReplicas: 2}},
		&appsv1.Deployment{ObjectMeta: objectMeta("shop", "web-worker", created, owned),
			Spec: appsv1.DeploymentSpec{Replicas: new(int32(3))}, Status: appsv1.DeploymentStatus{AvailableReplicas: 1}},
		&corev1.Service{ObjectMeta: objectMeta("shop", "web", created, owned)},
		&corev1.Secret{ObjectMeta: objectMeta("shop", "web-credentials", created, owned), Data: map[string][]byte{"password": []byte("s3cr3t-value")}},
		&batchv1.Job{ObjectMeta: objectMeta("shop", "web-migrate", created, owned), Status: batchv1.JobStatus{Succeeded: 1}},
		&corev1.ConfigMap{ObjectMeta: objectMeta("shop", "shared-config", created, nil)},
		&corev1.ConfigMap{ObjectMeta: objectMeta("shop", "other-controller", created, controlledBy("uid-other", "other"))},
		&corev1.ConfigMap{ObjectMeta: objectMeta("shop", "not-controller", created, []metav1.OwnerReference{{
			APIVersion: widgetGVK.GroupVersion().String(), Kind: widgetGVK.Kind, Name: "web", UID: webUID}})},
		&corev1.ConfigMap{ObjectMeta: objectMeta("dev", "web-elsewhere", created, owned)},
		event("shop", "web.1", webUID, corev1.EventTypeNormal, "Created", "created Deployment shop/web", 1, now.Add(-10*time.Minute)),
		event("shop", "web.2", webUID, corev1.EventTypeWarning, "ValidationWarning", "spec.image uses <i>latest</i>", 3, now.Add(-time.Minute)),
		event("shop", "other.1", "uid-other", corev1.EventTypeNormal, "Other", "about another object", 1, now),
	}
}

// fakeClient serves objs, with the involvedObject.uid index that event field selectors need.
func fakeClient(t testing.TB, funcs *interceptor.Funcs, objs ...client.Object) client.WithWatch {
	t.Helper()
	b := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(objs...).
		WithIndex(&corev1.Event{}, "involvedObject.uid", func(o client.Object) []string {
			return []string{string(o.(*corev1.Event).InvolvedObject.UID)}
		})
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	return b.Build()
}

// options are the inspector's options over c.
func options(c client.Reader) inspect.Options {
	opts := inspect.DefaultOptions()
	opts.Reader = c
	opts.Events = c
	opts.CRDs = []*katalog.CRD{widgetCRD(), databaseCRD()}
	opts.Health = newHealth()
	return opts
}

// newHandler is the inspector over the world, at the fixed clock.
func newHandler(t testing.TB) http.Handler {
	t.Helper()
	h, err := inspect.NewAt(options(fakeClient(t, nil, world()...)), now)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// do sends one request to h and returns the status code, header and body.
func do(t testing.TB, h http.Handler, method, path string) (int, http.Header, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	body, err := io.ReadAll(rec.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Code, rec.Header(), string(body)
}

// getJSON sends a GET, checks the status code and content type, and decodes the body into v.
func getJSON(t testing.TB, h http.Handler, path string, wantCode int, v any) {
	t.Helper()
	code, header, body := do(t, h, http.MethodGet, path)
	if code != wantCode {
		t.Fatalf("GET %s: status %d, want %d; body:\n%s", path, code, wantCode, body)
	}
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("GET %s: Content-Type %q, want application/json", path, ct)
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("GET %s: decode %T: %v\n%s", path, v, err, body)
	}
}
