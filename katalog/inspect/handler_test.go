package inspect_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/katalog"
	"github.com/c5c3/reconciler-sdk/katalog/inspect"
)

func TestNewRefusesInvalidOptions(t *testing.T) {
	c := fakeClient(t, nil)
	for _, tc := range []struct {
		name   string
		change func(*inspect.Options)
		want   string
	}{
		{"no reader", func(o *inspect.Options) { o.Reader = nil }, "Reader is nil"},
		{"no health", func(o *inspect.Options) { o.Health = nil }, "Health is nil"},
		{"nil CRD", func(o *inspect.Options) { o.CRDs = append(o.CRDs, nil) }, "CRDs[2] is nil"},
		{"bad name", func(o *inspect.Options) { o.CRDs[1].Name = "Not/A/Label" }, `CRDs[1].Name "Not/A/Label"`},
		{"duplicate", func(o *inspect.Options) { o.CRDs = append(o.CRDs, widgetCRD()) }, `CRDs[2].Name "widget" is given twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := options(c)
			tc.change(&opts)
			h, err := inspect.New(opts)
			if !errors.Is(err, inspect.ErrInvalidOptions) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want ErrInvalidOptions naming %q", err, tc.want)
			}
			if h != nil {
				t.Fatal("New returned a handler with an error")
			}
		})
	}
}

// Zero options take their defaults: the default child kinds, the default refresh, and
// events read through Reader.
func TestDefaultsFillZeroOptions(t *testing.T) {
	opts := options(fakeClient(t, nil, world()...))
	opts.ChildKinds, opts.Refresh, opts.Events = nil, 0, nil
	h, err := inspect.NewAt(opts, now)
	if err != nil {
		t.Fatal(err)
	}
	var d inspect.CRDetail
	getJSON(t, h, "/katalog/widget/cr/shop/web", http.StatusOK, &d)
	if len(d.Children) != 5 {
		t.Fatalf("with the default child kinds, %d children, want 5: %+v", len(d.Children), d.Children)
	}
	if len(d.Events) != 2 || d.EventsError != "" {
		t.Fatalf("without an Events reader, events %+v (%s), want the two about the widget through Reader", d.Events, d.EventsError)
	}
	_, _, page := do(t, h, http.MethodGet, "/controlcenter/")
	if !strings.Contains(page, `<meta http-equiv="refresh" content="10">`) {
		t.Fatalf("default refresh is not 10 s:\n%s", page)
	}
}

func TestHealthAnswers200WhenHealthyAnd503Otherwise(t *testing.T) {
	h := newHandler(t)
	var healthy inspect.HealthReport
	getJSON(t, h, "/katalog/widget/health", http.StatusOK, &healthy)
	want := inspect.HealthReport{CRD: "widget", Health: inspect.Health{
		Healthy: true, Synced: true, LastReconcile: now.Add(-30 * time.Second), Reconciles: 42, Failures: 1,
	}}
	if diff := cmp.Diff(want, healthy); diff != "" {
		t.Errorf("healthy report (-want +got):\n%s", diff)
	}

	var sick inspect.HealthReport
	getJSON(t, h, "/katalog/database/health", http.StatusServiceUnavailable, &sick)
	want = inspect.HealthReport{CRD: "database", Health: inspect.Health{
		Synced: true, LastError: "Database shop/db: dial tcp: connection refused", Reconciles: 7, Failures: 7,
	}}
	if diff := cmp.Diff(want, sick); diff != "" {
		t.Errorf("unhealthy report (-want +got):\n%s", diff)
	}

	// The JSON names are part of the API.
	_, _, body := do(t, h, http.MethodGet, "/katalog/database/health")
	for _, key := range []string{`"crd": "database"`, `"healthy": false`, `"synced": true`, `"lastError": "Database shop/db`, `"reconciles": 7`, `"failures": 7`} {
		if !strings.Contains(body, key) {
			t.Errorf("health body lacks %s:\n%s", key, body)
		}
	}
	if strings.Contains(body, "lastReconcile") {
		t.Errorf("a CRD never reconciled reports a lastReconcile:\n%s", body)
	}
}

func TestCRDEntry(t *testing.T) {
	var got inspect.CRDInfo
	getJSON(t, newHandler(t), "/katalog/widget", http.StatusOK, &got)
	want := inspect.CRDInfo{
		Name: "widget", Group: "inspect.katalog.test", Version: "v1alpha1", Kind: "Widget", Plural: "widgets",
		Workers: 2, Resync: "30s", DependsOn: map[string]string{"database": "healthy"},
		Health: newHealth().Health("widget"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CRD entry (-want +got):\n%s", diff)
	}

	var defaults inspect.CRDInfo
	getJSON(t, newHandler(t), "/katalog/database", http.StatusOK, &defaults)
	if defaults.Workers != katalog.DefaultWorkers || defaults.Resync != katalog.DefaultResync.String() || defaults.DependsOn != nil {
		t.Errorf("entry without workers, resync and dependsOn: %+v", defaults)
	}
}

func TestCRList(t *testing.T) {
	var got inspect.CRList
	getJSON(t, newHandler(t), "/katalog/widget/cr", http.StatusOK, &got)
	want := inspect.CRList{CRD: "widget", Items: []inspect.CRSummary{
		{Namespace: "dev", Name: "api", Ready: "False", Reason: "WaitingForDependency", Generation: 2, ObservedGeneration: 1,
			Created: now.Add(-72 * time.Hour), Age: "3d"},
		{Namespace: "shop", Name: "web", Phase: "Ready", Ready: "True", Reason: "Reconciled", Generation: 3, ObservedGeneration: 3,
			Created: now.Add(-2 * time.Hour), Age: "120m"},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CR list (-want +got):\n%s", diff)
	}

	var empty inspect.CRList
	getJSON(t, newHandler(t), "/katalog/database/cr", http.StatusOK, &empty)
	if empty.Items == nil || len(empty.Items) != 0 {
		t.Errorf("a CRD without custom resources lists %#v, want an empty list", empty.Items)
	}
}

func TestCRDetail(t *testing.T) {
	var got inspect.CRDetail
	getJSON(t, newHandler(t), "/katalog/widget/cr/shop/web", http.StatusOK, &got)
	want := inspect.CRDetail{
		CRD: "widget", Kind: "Widget", UID: "uid-web",
		CRSummary: inspect.CRSummary{Namespace: "shop", Name: "web", Phase: "Ready", Ready: "True", Reason: "Reconciled",
			Generation: 3, ObservedGeneration: 3, Created: now.Add(-2 * time.Hour), Age: "120m"},
		StatusFields: []inspect.Field{
			{Path: "endpoint", Value: "web.shop.svc:80"},
			{Path: "message", Value: "<script>alert(1)</script>"},
			{Path: "observedGeneration", Value: "3"},
			{Path: "phase", Value: "Ready"},
			{Path: "regions", Value: `["eu","us"]`},
			{Path: "replicas.desired", Value: "2"},
			{Path: "replicas.ready", Value: "2"},
		},
		Conditions: []inspect.Condition{
			{Type: "Ready", Status: "True", Reason: "Reconciled", Message: "all children are ready", ObservedGeneration: 3,
				LastTransitionTime: now.Add(-5 * time.Minute)},
			{Type: "DatabaseReady", Status: "False", Reason: "Pending", Message: "<b>waiting</b> for db", ObservedGeneration: 3,
				LastTransitionTime: now.Add(-time.Hour)},
		},
		// In the order of the child kinds, then by name; not the ConfigMaps it does not
		// control, nor the one in another namespace.
		Children: []inspect.Child{
			{Kind: "Deployment", Name: "web", Ready: true, Readiness: "2/2 available", Age: "90m"},
			{Kind: "Deployment", Name: "web-worker", Ready: false, Readiness: "1/3 available", Age: "90m"},
			{Kind: "Service", Name: "web", Ready: true, Readiness: "exists", Age: "90m"},
			{Kind: "Secret", Name: "web-credentials", Ready: true, Readiness: "exists", Age: "90m"},
			{Kind: "Job", Name: "web-migrate", Ready: true, Readiness: "1/1 succeeded", Age: "90m"},
		},
		Events: []inspect.Event{
			{Type: "Warning", Reason: "ValidationWarning", Message: "spec.image uses <i>latest</i>", Count: 3, Source: "katalog",
				LastSeen: now.Add(-time.Minute), Age: "60s"},
			{Type: "Normal", Reason: "Created", Message: "created Deployment shop/web", Count: 1, Source: "katalog",
				LastSeen: now.Add(-10 * time.Minute), Age: "10m"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CR detail (-want +got):\n%s", diff)
	}
	_, _, body := do(t, newHandler(t), http.MethodGet, "/katalog/widget/cr/shop/web")
	if strings.Contains(body, "s3cr3t") || strings.Contains(body, "czNjcjN0") {
		t.Errorf("the detail shows a Secret's data:\n%s", body)
	}
}

func TestJobReadiness(t *testing.T) {
	web := world()[0]
	owned := controlledBy(web.GetUID(), "web")
	created := now.Add(-time.Minute)
	objs := []client.Object{web,
		&batchv1.Job{ObjectMeta: objectMeta("shop", "a-running", created, owned),
			Spec: batchv1.JobSpec{Completions: new(int32(3))}, Status: batchv1.JobStatus{Succeeded: 1, Active: 2}},
		&batchv1.Job{ObjectMeta: objectMeta("shop", "b-failed", created, owned), Status: batchv1.JobStatus{
			Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}}},
		&batchv1.Job{ObjectMeta: objectMeta("shop", "c-done", created, owned),
			Spec: batchv1.JobSpec{Completions: new(int32(2))}, Status: batchv1.JobStatus{Succeeded: 2}},
	}
	h, err := inspect.NewAt(options(fakeClient(t, nil, objs...)), now)
	if err != nil {
		t.Fatal(err)
	}
	var d inspect.CRDetail
	getJSON(t, h, "/katalog/widget/cr/shop/web", http.StatusOK, &d)
	want := []inspect.Child{
		{Kind: "Job", Name: "a-running", Ready: false, Readiness: "1/3 succeeded, 2 active", Age: "60s"},
		{Kind: "Job", Name: "b-failed", Ready: false, Readiness: "failed BackoffLimitExceeded", Age: "60s"},
		{Kind: "Job", Name: "c-done", Ready: true, Readiness: "2/2 succeeded", Age: "60s"},
	}
	if diff := cmp.Diff(want, d.Children); diff != "" {
		t.Errorf("Job children (-want +got):\n%s", diff)
	}
}

func TestUnknownCRDAndCRAre404NamingThem(t *testing.T) {
	h := newHandler(t)
	for path, want := range map[string]string{
		"/katalog/nope/health":             `unknown CRD "nope"`,
		"/katalog/nope":                    `unknown CRD "nope"`,
		"/katalog/nope/cr":                 `unknown CRD "nope"`,
		"/katalog/nope/cr/shop/web":        `unknown CRD "nope"`,
		"/katalog/widget/cr/shop/missing":  "Widget shop/missing (CRD widget) not found",
		"/katalog/widget/cr/other/web":     "Widget other/web (CRD widget) not found",
		"/katalog/widget/cr/shop/web/more": "no route /katalog/widget/cr/shop/web/more",
		"/katalog/":                        "no route /katalog/",
	} {
		var body inspect.ErrorBody
		getJSON(t, h, path, http.StatusNotFound, &body)
		if body.Error != want {
			t.Errorf("GET %s: error %q, want %q", path, body.Error, want)
		}
	}
	for path, want := range map[string]string{
		"/controlcenter/katalog/nope":                 "unknown CRD &#34;nope&#34;",
		"/controlcenter/katalog/widget/cr/shop/gone":  "Widget shop/gone (CRD widget) not found",
		"/controlcenter/katalog/widget/cr/shop/web/x": "no page /controlcenter/katalog/widget/cr/shop/web/x",
	} {
		code, header, body := do(t, h, http.MethodGet, path)
		if code != http.StatusNotFound || !strings.HasPrefix(header.Get("Content-Type"), "text/html") || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d %s, want a 404 page naming %q:\n%s", path, code, header.Get("Content-Type"), want, body)
		}
	}
}

func TestOnlyGETAndHEAD(t *testing.T) {
	h := newHandler(t)
	paths := []string{
		"/katalog/widget/health", "/katalog/widget", "/katalog/widget/cr", "/katalog/widget/cr/shop/web",
		"/controlcenter/", "/controlcenter/katalog/widget", "/controlcenter/katalog/widget/cr/shop/web",
	}
	for _, path := range paths {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
			code, header, body := do(t, h, method, path)
			if code != http.StatusMethodNotAllowed || header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: %d, Allow %q; want 405 with Allow: GET, HEAD", method, path, code, header.Get("Allow"))
			}
			if strings.HasPrefix(path, "/katalog/") && !strings.Contains(body, `"error": "method `+method+` not allowed`) {
				t.Errorf("%s %s: body %s, want a JSON error naming the method", method, path, body)
			}
		}
	}

	// HEAD answers like GET, without a body (net/http drops it on the wire).
	srv := httptest.NewServer(h)
	defer srv.Close()
	for path, want := range map[string]int{
		"/katalog/widget/health": http.StatusOK, "/katalog/database/health": http.StatusServiceUnavailable,
		"/katalog/widget/cr/shop/web": http.StatusOK, "/controlcenter/katalog/widget": http.StatusOK,
	} {
		resp, err := srv.Client().Head(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("HEAD %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

func TestPagesEscapeValuesFromTheCluster(t *testing.T) {
	_, _, page := do(t, newHandler(t), http.MethodGet, "/controlcenter/katalog/widget/cr/shop/web")
	for _, raw := range []string{"<script>alert(1)</script>", "<b>waiting</b>", "<i>latest</i>"} {
		if strings.Contains(page, raw) {
			t.Errorf("the page holds %s unescaped", raw)
		}
	}
	for _, escaped := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;b&gt;waiting&lt;/b&gt; for db", "&lt;i&gt;latest&lt;/i&gt;"} {
		if !strings.Contains(page, escaped) {
			t.Errorf("the page lacks the escaped text %s", escaped)
		}
	}
	if strings.Contains(strings.ToLower(page), "<script") {
		t.Errorf("the page carries a script element")
	}
}

func TestPages(t *testing.T) {
	h := newHandler(t)
	for _, tc := range []struct {
		path  string
		holds []string
	}{{
		path: "/controlcenter/",
		holds: []string{
			`<a href="/controlcenter/katalog/widget">widget</a>`, `<a href="/controlcenter/katalog/database">database</a>`,
			`<span class="badge ok">Healthy</span>`, `<span class="badge bad">Unhealthy</span>`,
			"Database shop/db: dial tcp: connection refused", `<td class="num">2</td>`, "30s ago",
		},
	}, {
		path: "/controlcenter/katalog/widget",
		holds: []string{
			`<a href="/controlcenter/">Control Center</a>`,
			`<a href="/controlcenter/katalog/widget/cr/shop/web">web</a>`, `<a href="/controlcenter/katalog/widget/cr/dev/api">api</a>`,
			"WaitingForDependency", `<td class="num">1/2</td>`,
			`<a href="/controlcenter/katalog/database">database</a> (healthy)`,
		},
	}, {
		path:  "/controlcenter/katalog/database",
		holds: []string{"No custom resources.", "Last error: Database shop/db: dial tcp: connection refused"},
	}, {
		path: "/controlcenter/katalog/widget/cr/shop/web",
		holds: []string{
			`<a href="/controlcenter/katalog/widget">widget</a>`,
			"<code>replicas.desired</code>", "all children are ready", "DatabaseReady",
			`<div class="name">web-worker</div>`, "1/3 available", "1/1 succeeded", "ValidationWarning", "60s ago",
		},
	}} {
		code, header, page := do(t, h, http.MethodGet, tc.path)
		if code != http.StatusOK || header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Errorf("GET %s: %d %s", tc.path, code, header.Get("Content-Type"))
		}
		if !strings.Contains(page, `<meta http-equiv="refresh" content="10">`) {
			t.Errorf("GET %s: no refresh every 10 s", tc.path)
		}
		for _, s := range tc.holds {
			if !strings.Contains(page, s) {
				t.Errorf("GET %s: page lacks %s", tc.path, s)
			}
		}
	}
}

func TestRefreshPeriod(t *testing.T) {
	for refresh, want := range map[time.Duration]string{
		3 * time.Second:         `<meta http-equiv="refresh" content="3">`,
		1500 * time.Millisecond: `<meta http-equiv="refresh" content="1">`,
		-1:                      "",
	} {
		opts := options(fakeClient(t, nil, world()...))
		opts.Refresh = refresh
		h, err := inspect.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		_, _, page := do(t, h, http.MethodGet, "/controlcenter/")
		got := regexp.MustCompile(`<meta http-equiv="refresh"[^>]*>`).FindString(page)
		if got != want {
			t.Errorf("Refresh %v: %q, want %q", refresh, got, want)
		}
	}
}

// A child kind or the events that cannot be read are reported next to what could be
// read; a custom resource list that cannot be read fails the request with the cause.
func TestReadFailures(t *testing.T) {
	boom := errors.New("boom")
	funcs := &interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		switch list.(type) {
		case *batchv1.JobList, *corev1.EventList:
			return boom
		}
		if u, ok := list.(interface{ GetKind() string }); ok && u.GetKind() == "DatabaseList" {
			return boom
		}
		return c.List(ctx, list, opts...)
	}}
	h, err := inspect.NewAt(options(fakeClient(t, funcs, world()...)), now)
	if err != nil {
		t.Fatal(err)
	}
	var d inspect.CRDetail
	getJSON(t, h, "/katalog/widget/cr/shop/web", http.StatusOK, &d)
	if want := []string{"Job in namespace shop: boom"}; !cmp.Equal(want, d.ChildErrors) {
		t.Errorf("child errors %q, want %q", d.ChildErrors, want)
	}
	if len(d.Children) != 4 {
		t.Errorf("%d children besides the Jobs, want 4: %+v", len(d.Children), d.Children)
	}
	if want := "list events of Widget shop/web: boom"; d.EventsError != want || len(d.Events) != 0 {
		t.Errorf("events error %q with %d events, want %q", d.EventsError, len(d.Events), want)
	}
	_, _, page := do(t, h, http.MethodGet, "/controlcenter/katalog/widget/cr/shop/web")
	for _, s := range []string{"Could not read Job in namespace shop: boom", "list events of Widget shop/web: boom"} {
		if !strings.Contains(page, s) {
			t.Errorf("detail page lacks %q", s)
		}
	}

	var e inspect.ErrorBody
	getJSON(t, h, "/katalog/database/cr", http.StatusInternalServerError, &e)
	if want := "list Database (CRD database): boom"; e.Error != want {
		t.Errorf("list error %q, want %q", e.Error, want)
	}
	code, _, page := do(t, h, http.MethodGet, "/controlcenter/")
	if code != http.StatusOK || !strings.Contains(page, "list Database (CRD database): boom") {
		t.Errorf("index page: %d, want 200 naming the failed list:\n%s", code, page)
	}
}

// An Events reader that ignores field selectors (a cache without the index, a test
// double) still yields only the custom resource's events.
func TestEventsFilteredByUIDWhateverTheReader(t *testing.T) {
	funcs := &interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if _, ok := list.(*corev1.EventList); ok {
			return c.List(ctx, list, client.InNamespace("shop"))
		}
		return c.List(ctx, list, opts...)
	}}
	h, err := inspect.NewAt(options(fakeClient(t, funcs, world()...)), now)
	if err != nil {
		t.Fatal(err)
	}
	var d inspect.CRDetail
	getJSON(t, h, "/katalog/widget/cr/shop/web", http.StatusOK, &d)
	var reasons []string
	for _, e := range d.Events {
		reasons = append(reasons, e.Reason)
	}
	if want := []string{"ValidationWarning", "Created"}; !cmp.Equal(want, reasons) {
		t.Errorf("events %q, want %q", reasons, want)
	}
}

func TestRecentEventsOnly(t *testing.T) {
	web := world()[0]
	objs := []client.Object{web}
	for i := range inspect.RecentEvents + 5 {
		objs = append(objs, event("shop", fmt.Sprintf("web.%02d", i), web.GetUID(), corev1.EventTypeNormal,
			fmt.Sprintf("R%02d", i), "m", 1, now.Add(-time.Duration(i)*time.Minute)))
	}
	h, err := inspect.NewAt(options(fakeClient(t, nil, objs...)), now)
	if err != nil {
		t.Fatal(err)
	}
	var d inspect.CRDetail
	getJSON(t, h, "/katalog/widget/cr/shop/web", http.StatusOK, &d)
	if len(d.Events) != inspect.RecentEvents || d.Events[0].Reason != "R00" || d.Events[len(d.Events)-1].Reason != fmt.Sprintf("R%02d", inspect.RecentEvents-1) {
		t.Errorf("got %d events from %s, want the newest %d", len(d.Events), d.Events[0].Reason, inspect.RecentEvents)
	}
}

// CacheOptions adds Events without their managed fields, keeps the other entries and
// what an Events entry already selected, and leaves the options it was given alone.
func TestCacheOptions(t *testing.T) {
	sel := labels.SelectorFromSet(labels.Set{"team": "a"})
	secret := &corev1.Secret{}
	base := cache.Options{ByObject: map[client.Object]cache.ByObject{secret: {Label: sel}, &corev1.Event{}: {Label: sel}}}
	got := inspect.CacheOptions(base)
	label := func(by cache.ByObject) string {
		if by.Label == nil {
			return ""
		}
		return by.Label.String()
	}
	if len(base.ByObject) != 2 || label(base.ByObject[secret]) != "team=a" {
		t.Fatalf("CacheOptions changed its argument: %+v", base.ByObject)
	}
	var events []cache.ByObject
	for obj, by := range got.ByObject {
		if _, ok := obj.(*corev1.Event); ok {
			events = append(events, by)
		}
	}
	if len(events) != 1 || events[0].Transform == nil || label(events[0]) != "team=a" || label(got.ByObject[secret]) != "team=a" {
		t.Fatalf("CacheOptions: %d Events entries %+v, Secret %+v; want one Events entry with a transform and the selector kept",
			len(events), events, got.ByObject[secret])
	}
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}}
	out, err := events[0].Transform(ev)
	if err != nil || len(out.(*corev1.Event).ManagedFields) != 0 {
		t.Errorf("the Events transform kept the managed fields: %v %+v", err, out)
	}
}
