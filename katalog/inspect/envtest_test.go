package inspect_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/katalog"
	"github.com/c5c3/reconciler-sdk/katalog/inspect"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// On a real API server, the custom resources, their children and their events are read
// from the manager's cache (the events through the index of IndexEvents): once the
// informers run, no page view sends a request at all.
func TestReadsComeFromTheManagersCache(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	web := createWidget(ctx, t, ns, "web")

	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", OwnerReferences: controlledBy(web.GetUID(), "web")},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
	mustCreate(ctx, t, dep)
	if _, err := simulate.MarkDeploymentAvailable(ctx, env.Client, client.ObjectKeyFromObject(dep)); err != nil {
		t.Fatal(err)
	}
	mustCreate(ctx, t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-config", OwnerReferences: controlledBy(web.GetUID(), "web")}})
	mustCreate(ctx, t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "not-ours"}})
	mustCreate(ctx, t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "someone-elses",
		OwnerReferences: controlledBy(types.UID("8b5bd4a8-0000-4000-8000-000000000000"), "other")}})
	ev := event(ns, "web.1", web.GetUID(), corev1.EventTypeWarning, "ValidationWarning", "spec.image uses latest", 2, time.Now())
	ev.InvolvedObject.APIVersion = widgetGVK.GroupVersion().String()
	mustCreate(ctx, t, ev)
	other := event(ns, "other.1", "8b5bd4a8-0000-4000-8000-000000000000", corev1.EventTypeNormal, "Other", "about someone else", 1, time.Now())
	mustCreate(ctx, t, other)

	mgr, counter := env.StartManager(t, ctrl.Options{Cache: inspect.CacheOptions(cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})})
	if err := inspect.IndexEvents(ctx, mgr.GetFieldIndexer()); err != nil {
		t.Fatal(err)
	}
	opts := inspect.DefaultOptions()
	opts.Reader = mgr.GetCache()
	opts.CRDs = []*katalog.CRD{widgetCRD()}
	opts.Health = newHealth()
	h, err := inspect.New(opts)
	if err != nil {
		t.Fatal(err)
	}

	// The first reads start the informers; wait until the cache holds what was created.
	detailPath := "/katalog/widget/cr/" + ns + "/web"
	var d inspect.CRDetail
	deadline := time.Now().Add(testenv.ConditionTimeout)
	for {
		d = inspect.CRDetail{}
		getJSON(t, h, detailPath, http.StatusOK, &d)
		if d.Phase == "Ready" && len(d.Children) == 2 && d.Children[0].Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cache never showed the widget Ready with its Deployment available and its ConfigMap: %+v", d)
		}
		time.Sleep(100 * time.Millisecond)
	}
	wantChildren := []inspect.Child{
		{Kind: "Deployment", Name: "web", Ready: true, Readiness: "1/1 available", Age: d.Children[0].Age},
		{Kind: "ConfigMap", Name: "web-config", Ready: true, Readiness: "exists", Age: d.Children[1].Age},
	}
	if len(d.Children) != 2 || d.Children[0] != wantChildren[0] || d.Children[1] != wantChildren[1] {
		t.Errorf("children %+v, want %+v", d.Children, wantChildren)
	}
	if len(d.Events) != 1 || d.Events[0].Reason != "ValidationWarning" || d.Events[0].Count != 2 || d.EventsError != "" {
		t.Errorf("events %+v (%s), want the one ValidationWarning about the widget", d.Events, d.EventsError)
	}
	if len(d.Conditions) != 1 || d.Conditions[0].Type != "Ready" || d.ObservedGeneration != 1 || d.Ready != "True" {
		t.Errorf("conditions %+v, observedGeneration %d, ready %q", d.Conditions, d.ObservedGeneration, d.Ready)
	}
	for _, path := range []string{"/controlcenter/", "/controlcenter/katalog/widget", "/katalog/widget/cr"} {
		_, _, _ = do(t, h, http.MethodGet, path) // warm every informer the pages use
	}

	for _, tc := range []struct {
		path string
		gets int
	}{
		{"/katalog/widget/cr", 0},
		{"/katalog/widget/health", 0},
		{"/controlcenter/", 0},
		{"/controlcenter/katalog/widget", 0},
		{detailPath, 0},
		{"/controlcenter/katalog/widget/cr/" + ns + "/web", 0},
	} {
		counter.Reset()
		code, _, body := do(t, h, http.MethodGet, tc.path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", tc.path, code, body)
		}
		if counter.Total() != tc.gets {
			t.Errorf("GET %s sent %d requests (%d GET), want %d", tc.path, counter.Total(), counter.Method(http.MethodGet), tc.gets)
		}
		if strings.Contains(tc.path, "/cr") && !strings.Contains(body, "web") {
			t.Errorf("GET %s does not show the widget:\n%s", tc.path, body)
		}
	}

	// A custom resource deleted from the cluster is 404 once the cache has seen it go.
	if err := env.Client.Delete(ctx, web); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(testenv.ConditionTimeout)
	for {
		code, _, body := do(t, h, http.MethodGet, detailPath)
		if code == http.StatusNotFound {
			if want := "Widget " + ns + "/web (CRD widget) not found"; !strings.Contains(body, want) {
				t.Errorf("404 body %s, want it to name %s", body, want)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s still answers %d after the widget was deleted", detailPath, code)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// createWidget creates a Widget and writes a Ready status through the status subresource.
func createWidget(ctx context.Context, t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := widget(ns, name, "", 0, time.Time{}, nil)
	u.SetCreationTimestamp(metav1.Time{})
	mustCreate(ctx, t, u)
	u.Object["status"] = map[string]any{
		"phase":              "Ready",
		"observedGeneration": u.GetGeneration(),
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "Reconciled", "message": "all children are ready",
			"observedGeneration": u.GetGeneration(), "lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
		}},
	}
	if err := env.Client.Status().Update(ctx, u); err != nil {
		t.Fatalf("update status of Widget %s/%s: %v", ns, name, err)
	}
	return u
}

func mustCreate(ctx context.Context, t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatalf("create %T %s/%s: %v", obj, obj.GetNamespace(), obj.GetName(), err)
	}
}
