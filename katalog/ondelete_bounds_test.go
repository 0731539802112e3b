package katalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// onDeleteBoundKatalog's onDelete makes a call, then runs a Job.
const onDeleteBoundKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: ondelete-bounds}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      resync: 1h
      operatorBox:
        onReconcile:
          configMaps:
            - {name: "{{ .metadata.name }}", data: {k: v}}
        onDelete:
          external:
            - {name: deregister, url: "http://192.0.2.1/deregister/{{ .metadata.name }}", method: POST}
          jobs:
            - {name: "{{ .metadata.name }}-cleanup", image: busybox, command: [echo, bye]}
`

// countingTransport answers every request with status (0: fails it) and counts them.
type countingTransport struct {
	status int
	calls  atomic.Int32
}

func (tr *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tr.calls.Add(1)
	if tr.status == 0 {
		return nil, errors.New("connection refused")
	}
	return &http.Response{StatusCode: tr.status, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

// onDeleteBoundOptions are testOptions whose external calls go to tr and whose events go to the
// returned recorder.
func onDeleteBoundOptions(tr *countingTransport) (EngineOptions, *events.FakeRecorder) {
	opts := testOptions()
	opts.HTTPClient = &http.Client{Transport: tr}
	rec := events.NewFakeRecorder(100)
	opts.Recorder = rec
	return opts, rec
}

// deleteHeld deletes obj on the API server; its finalizer keeps it there.
func deleteHeld(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	if err := env.Client.Delete(context.Background(), obj.DeepCopy()); err != nil {
		t.Fatalf("delete %s: %v", obj.GetName(), err)
	}
}

// crGone reports whether obj is no longer on the API server.
func crGone(ctx context.Context, obj *unstructured.Unstructured) error {
	switch err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopy()); {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	return errors.New("still there")
}

// recordedEvents returns the events rec holds now.
func recordedEvents(rec *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case ev := <-rec.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// hasRecordedEvent reports whether one of evs starts with "<type> <reason> " and holds every part.
func hasRecordedEvent(evs []string, typ, reason string, parts ...string) bool {
	for _, ev := range evs {
		if !strings.HasPrefix(ev, typ+" "+reason+" ") {
			continue
		}
		all := true
		for _, p := range parts {
			all = all && strings.Contains(ev, p)
		}
		if all {
			return true
		}
	}
	return false
}

// waitRecordedEvent waits until rec has recordedEvents an event of typ and reason holding every part.
func waitRecordedEvent(t *testing.T, rec *events.FakeRecorder, typ, reason string, parts ...string) {
	t.Helper()
	var seen []string
	eventually(t, typ+" event "+reason, func(context.Context) error {
		seen = append(seen, recordedEvents(rec)...)
		if hasRecordedEvent(seen, typ, reason, parts...) {
			return nil
		}
		return fmt.Errorf("none holding %q among %q", parts, seen)
	})
}

// TestNewEngineOnDeleteDefault: NewEngine fills in the onDelete bound an EngineOptions
// leaves zero, and DefaultEngineOptions carries it.
func TestNewEngineOnDeleteDefault(t *testing.T) {
	e, _ := startEngine(t, []*Katalog{mustParse(t, "ondelete.yaml", onDeleteBoundKatalog)}, EngineOptions{}, env.Namespace(t))
	if e.opts.OnDeleteGiveUpAfter != DefaultOnDeleteGiveUpAfter {
		t.Errorf("NewEngine: OnDeleteGiveUpAfter %s, want %s", e.opts.OnDeleteGiveUpAfter, DefaultOnDeleteGiveUpAfter)
	}
	if def := DefaultEngineOptions(); def.OnDeleteGiveUpAfter != DefaultOnDeleteGiveUpAfter {
		t.Errorf("DefaultEngineOptions: OnDeleteGiveUpAfter %s, want %s", def.OnDeleteGiveUpAfter, DefaultOnDeleteGiveUpAfter)
	}
}

// TestOnDeleteFailingCallGivesUp: an onDelete call that keeps failing holds the finalizer
// while OnDeleteGiveUpAfter has not passed since the deletion, with Ready saying when
// onDelete gives up; the first pass after it records a Warning event naming the custom
// resource and why, and removes the finalizer, so the custom resource goes.
func TestOnDeleteFailingCallGivesUp(t *testing.T) {
	ns := env.Namespace(t)
	k := mustParse(t, "ondelete.yaml", onDeleteBoundKatalog)
	tr := &countingTransport{}
	opts, _ := onDeleteBoundOptions(tr)
	g := newObject("Gadget", ns, "g", map[string]any{})
	create(t, g)
	e := passEngineWith(env.Client, k, opts)
	if _, ready, err := passOnce(t, e, "gadget", g); err != nil || ready.Status != metav1.ConditionTrue {
		t.Fatalf("live pass: %v, Ready %+v", err, ready)
	}
	deleteHeld(t, g)

	fresh, ready, err := passOnce(t, e, "gadget", g)
	if !errors.Is(err, ErrExternalCall) {
		t.Fatalf("deletion pass: %v, want ErrExternalCall", err)
	}
	if !slices.Contains(fresh.GetFinalizers(), Finalizer) {
		t.Fatalf("finalizer removed before OnDeleteGiveUpAfter passed")
	}
	if ready.Status != metav1.ConditionFalse || !strings.Contains(ready.Message, "onDelete gives up at ") {
		t.Errorf("Ready %s %q, want False saying when onDelete gives up", ready.Status, ready.Message)
	}
	if n := tr.calls.Load(); n != 1 {
		t.Errorf("%d calls, want 1", n)
	}

	opts, rec := onDeleteBoundOptions(tr)
	opts.OnDeleteGiveUpAfter = time.Nanosecond // as good as the bound having passed
	e = passEngineWith(env.Client, k, opts)
	if _, err := e.recs["gadget"].Reconcile(context.Background(), reconcileRequest(g)); err != nil {
		t.Fatalf("deletion pass after the bound: %v", err)
	}
	if err := crGone(context.Background(), g); err != nil {
		t.Fatalf("custom resource after the bound: %v", err)
	}
	if evs := recordedEvents(rec); !hasRecordedEvent(evs, corev1.EventTypeWarning, ReasonOnDeleteAbandoned, "Gadget "+ns+"/g", "deregister", "finalizer was removed") {
		t.Errorf("no Warning %s event naming Gadget %s/g and the call among %q", ReasonOnDeleteAbandoned, ns, evs)
	}
}

// crEvents returns the events of ns with reason regarding the custom resource name.
func crEvents(ctx context.Context, ns, name, reason string) ([]eventsv1.Event, error) {
	var list eventsv1.EventList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var out []eventsv1.Event
	for _, ev := range list.Items {
		if ev.Reason == reason && ev.Regarding.Name == name {
			out = append(out, ev)
		}
	}
	return out, nil
}

// TestOnDeleteJobNeverFinishingGivesUp: an onDelete Job that never finishes (envtest
// runs no Job controller) holds the finalizer only until OnDeleteGiveUpAfter: then the
// engine lets the custom resource go with a Warning event on it naming it and the Job.
// The Job onDelete wrote carries OnDeleteJobAnnotation with the custom resource's UID.
func TestOnDeleteJobNeverFinishingGivesUp(t *testing.T) {
	ns := env.Namespace(t)
	tr := &countingTransport{status: http.StatusOK}
	opts := testOptions()
	opts.HTTPClient = &http.Client{Transport: tr}
	opts.OnDeleteGiveUpAfter = time.Nanosecond
	startEngine(t, []*Katalog{mustParse(t, "ondelete.yaml", onDeleteBoundKatalog)}, opts, ns)
	g := newObject("Gadget", ns, "g", map[string]any{})
	create(t, g)
	waitReady(t, g, metav1.ConditionTrue, ReasonReconciled)
	fresh := g.DeepCopy()
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(g), fresh); err != nil {
		t.Fatal(err)
	}
	deleteHeld(t, g)
	eventually(t, "custom resource gone", func(ctx context.Context) error { return crGone(ctx, g) })
	eventually(t, "OnDeleteAbandoned event", func(ctx context.Context) error {
		evs, err := crEvents(ctx, ns, "g", ReasonOnDeleteAbandoned)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if ev.Type == corev1.EventTypeWarning && strings.Contains(ev.Note, "Gadget "+ns+"/g") && strings.Contains(ev.Note, "g-cleanup") {
				return nil
			}
		}
		return fmt.Errorf("no Warning event naming Gadget %s/g and Job g-cleanup among %+v", ns, evs)
	})
	job := &batchv1.Job{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "g-cleanup"}, job); err != nil {
		t.Fatal(err)
	}
	if got := job.Annotations[OnDeleteJobAnnotation]; got != string(fresh.GetUID()) {
		t.Errorf("onDelete Job annotation %s=%q, want the UID %s", OnDeleteJobAnnotation, got, fresh.GetUID())
	}
}

// TestOnDeleteDoesNotWaitForDependency: a custom resource being deleted whose CRD waits
// for a dependsOn target that never becomes healthy runs onDelete all the same (a
// deletion never waits for dependsOn): its Job is written, and once OnDeleteGiveUpAfter
// has passed the wait given up, named by the Warning event, is the Job's.
func TestOnDeleteDoesNotWaitForDependency(t *testing.T) {
	ns := env.Namespace(t)
	k := mustParse(t, "ondelete-deps.yaml", `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: ondelete-deps}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      dependsOn: {database: healthy}
      operatorBox:
        onDelete:
          jobs:
            - {name: "{{ .metadata.name }}-cleanup", image: busybox}
    database:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Database, plural: databases}
      operatorBox:
        onReconcile:
          configMaps:
            - {name: "{{ .metadata.name }}", forEach: {field: spec.name}}
`)
	opts, rec := onDeleteBoundOptions(&countingTransport{})
	opts.OnDeleteGiveUpAfter = time.Nanosecond // as good as the bound having passed
	e, _ := startEngine(t, []*Katalog{k}, opts, ns)
	// Every pass over this Database fails (its forEach field is no list): the database
	// CRD is never healthy.
	d := newObject("Database", ns, "d", map[string]any{"name": "not-a-list"})
	create(t, d)
	waitReady(t, d, metav1.ConditionFalse, ReasonReconcileFailed)
	eventually(t, "database synced and unhealthy", func(context.Context) error {
		if !e.Synced("database") || e.Healthy("database") {
			return errors.New("not synced, or healthy")
		}
		return nil
	})
	g := newObject("Gadget", ns, "g", map[string]any{})
	g.SetFinalizers([]string{Finalizer})
	create(t, g)
	deleteHeld(t, g)
	eventually(t, "custom resource gone", func(ctx context.Context) error { return crGone(ctx, g) })
	waitRecordedEvent(t, rec, corev1.EventTypeWarning, ReasonOnDeleteAbandoned, "Gadget "+ns+"/g", "g-cleanup")
	var jobs batchv1.JobList
	if err := env.Client.List(context.Background(), &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 || jobs.Items[0].Name != "g-cleanup" {
		t.Errorf("onDelete did not run while its dependency was not met: Jobs %v", jobs.Items)
	}
}

// TestOnDeleteSkippedInTerminatingNamespace: in a namespace being deleted nothing can be
// created, so a custom resource deleted there has its finalizer removed without onDelete
// running: no call is made, no Job is created, and a Warning event says so.
func TestOnDeleteSkippedInTerminatingNamespace(t *testing.T) {
	ctx := context.Background()
	// A namespace of the test's own: envtest runs no namespace controller, so a deleted
	// namespace stays Terminating, and env.Namespace's cleanup would delete it again.
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-terminating-"}}
	if err := env.Client.Create(ctx, nsObj); err != nil {
		t.Fatal(err)
	}
	ns := nsObj.Name
	tr := &countingTransport{status: http.StatusOK}
	opts, rec := onDeleteBoundOptions(tr)
	startEngine(t, []*Katalog{mustParse(t, "ondelete.yaml", onDeleteBoundKatalog)}, opts, ns)
	g := newObject("Gadget", ns, "g", map[string]any{})
	create(t, g)
	waitReady(t, g, metav1.ConditionTrue, ReasonReconciled)

	if err := env.Client.Delete(ctx, nsObj); err != nil {
		t.Fatal(err)
	}
	eventually(t, "namespace terminating", func(ctx context.Context) error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(nsObj), nsObj); err != nil {
			return err
		}
		if nsObj.Status.Phase != corev1.NamespaceTerminating {
			return fmt.Errorf("phase %s", nsObj.Status.Phase)
		}
		return nil
	})
	deleteHeld(t, g)
	eventually(t, "custom resource gone", func(ctx context.Context) error { return crGone(ctx, g) })
	if n := tr.calls.Load(); n != 0 {
		t.Errorf("%d onDelete calls made in a terminating namespace", n)
	}
	var jobs batchv1.JobList
	if err := env.Client.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 0 {
		t.Errorf("%d Jobs in a terminating namespace", len(jobs.Items))
	}
	waitRecordedEvent(t, rec, corev1.EventTypeWarning, ReasonOnDeleteSkipped, "namespace "+ns+" is being deleted", "Gadget "+ns+"/g")
}

// onDeleteJobNameKatalog's onCreate and onDelete Jobs are named by the custom resource,
// so they may coincide for one custom resource although the loader cannot tell.
const onDeleteJobNameKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: ondelete-names}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      resync: 1h
      operatorBox:
        onCreate:
          jobs:
            - {name: "{{ .metadata.name }}-{{ .spec.setup }}", image: busybox}
        onDelete:
          jobs:
            - {name: "{{ .metadata.name }}-{{ .spec.teardown }}", image: busybox}
`

// TestOnDeleteJobNamedLikeOnCreateJob: an onCreate Job that completed long ago is not
// taken for the onDelete Job of the same name: the deletion fails with
// ErrOnDeleteJobConflict naming it and keeps the finalizer (until onDelete gives up),
// while an onDelete Job of a name of its own is written with OnDeleteJobAnnotation and
// its completion ends the deletion.
func TestOnDeleteJobNamedLikeOnCreateJob(t *testing.T) {
	ns := env.Namespace(t)
	ctx := context.Background()
	e := passEngine(env.Client, mustParse(t, "ondelete-names.yaml", onDeleteJobNameKatalog))
	same := newObject("Gadget", ns, "same", map[string]any{"setup": "job", "teardown": "job"})
	own := newObject("Gadget", ns, "own", map[string]any{"setup": "setup", "teardown": "teardown"})
	for _, g := range []*unstructured.Unstructured{same, own} {
		create(t, g)
		if _, ready, err := passOnce(t, e, "gadget", g); err != nil || ready.Status != metav1.ConditionTrue {
			t.Fatalf("live pass of %s: %v, Ready %+v", g.GetName(), err, ready)
		}
	}
	for _, name := range []string{"same-job", "own-setup"} {
		if _, err := simulate.MarkJobComplete(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: name}); err != nil {
			t.Fatalf("complete onCreate Job %s: %v", name, err)
		}
	}
	deleteHeld(t, same)
	deleteHeld(t, own)

	fresh, ready, err := passOnce(t, e, "gadget", same)
	if !errors.Is(err, ErrOnDeleteJobConflict) {
		t.Fatalf("deletion pass of same: %v, want ErrOnDeleteJobConflict", err)
	}
	if !slices.Contains(fresh.GetFinalizers(), Finalizer) {
		t.Errorf("the completed onCreate Job same-job ended the deletion")
	}
	if !strings.Contains(ready.Message, ns+"/same-job") {
		t.Errorf("Ready message %q does not name the Job %s/same-job", ready.Message, ns)
	}

	fresh, ready, err = passOnce(t, e, "gadget", own)
	if err != nil || ready.Reason != ReasonDeleting || !slices.Contains(fresh.GetFinalizers(), Finalizer) {
		t.Fatalf("deletion pass of own: %v, Ready %s %q", err, ready.Reason, ready.Message)
	}
	job := &batchv1.Job{}
	key := client.ObjectKey{Namespace: ns, Name: "own-teardown"}
	if err := env.Client.Get(ctx, key, job); err != nil {
		t.Fatal(err)
	}
	if got := job.Annotations[OnDeleteJobAnnotation]; got != string(fresh.GetUID()) {
		t.Errorf("onDelete Job annotation %s=%q, want the UID %s", OnDeleteJobAnnotation, got, fresh.GetUID())
	}
	if _, err := simulate.MarkJobComplete(ctx, env.Client, key); err != nil {
		t.Fatal(err)
	}
	if _, err := e.recs["gadget"].Reconcile(ctx, reconcileRequest(own)); err != nil {
		t.Fatalf("deletion pass of own after its Job completed: %v", err)
	}
	if err := crGone(ctx, own); err != nil {
		t.Errorf("own after its onDelete Job completed: %v", err)
	}
}

// TestOnDeleteJobNameCollisionRefused: an onDelete Job whose name equals an onCreate or
// onReconcile Job's for every custom resource is refused at load time, naming both.
func TestOnDeleteJobNameCollisionRefused(t *testing.T) {
	for _, group := range []string{"onCreate", "onReconcile"} {
		t.Run(group, func(t *testing.T) {
			_, err := Parse("collide.yaml", []byte(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: collide}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      operatorBox:
        `+group+`:
          jobs:
            - {name: "{{ .metadata.name }}-job", image: busybox}
        onDelete:
          jobs:
            - {name: "{{ .metadata.name }}-job", image: busybox, when: [{field: spec.cleanup, equals: "true"}]}
`))
			errs := LoadErrors(err)
			if len(errs) != 1 {
				t.Fatalf("Parse: %v, want one LoadError", err)
			}
			le := errs[0]
			if !errors.Is(le, ErrDuplicateResource) || le.Line != 14 || le.Path != "spec.crds.gadget.operatorBox.onDelete.jobs[0].name" ||
				!strings.Contains(le.Error(), "operatorBox."+group+".jobs[0]") {
				t.Errorf("Parse: %v", le)
			}
		})
	}
	if _, err := Parse("distinct.yaml", []byte(onDeleteJobNameKatalog)); err != nil {
		t.Errorf("Jobs whose names differ by template: %v", err)
	}
}
