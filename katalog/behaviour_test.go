package katalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

const crossWatchKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: crosswatch}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      resync: 1h
      operatorBox:
        cross:
          - {crd: database, selector: {name: "{{ index .spec.dbs 0 }}"}, as: db}
    regional:
      apiTypes: {group: platform.io, version: v1alpha1, kind: RegionalApp, plural: regionalapps}
      resync: 1h
      operatorBox:
        cross:
          - {crd: database, selector: {name: "{{ .spec.db }}", namespace: "{{ .spec.dbNamespace }}"}, as: db, allowCrossNamespace: true}
    database:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Database, plural: databases}
      resync: 1h
`

// TestCrossWatchEnqueuesReaders: a change of a cross-referenced custom resource enqueues
// the custom resources whose selector names it, and no others: not the reader in the
// same namespace that selects another Database, not a reader in another namespace whose
// selector names the same Database in its own namespace. A selector that names another
// namespace is followed there; a reader whose selector cannot be rendered is enqueued.
func TestCrossWatchEnqueuesReaders(t *testing.T) {
	ns, other := env.Namespace(t), env.Namespace(t)
	eng, _ := startEngine(t, []*Katalog{mustParse(t, "crosswatch.yaml", crossWatchKatalog)}, testOptions(), ns, other)

	readers := []*unstructured.Unstructured{
		newObject("Gadget", ns, "reads-a", map[string]any{"dbs": []any{"a"}}),
		newObject("Gadget", ns, "reads-b", map[string]any{"dbs": []any{"b"}}),
		newObject("Gadget", ns, "no-dbs", map[string]any{}), // index of nothing: a template error
		newObject("Gadget", other, "reads-a-there", map[string]any{"dbs": []any{"a"}}),
		newObject("RegionalApp", other, "reads-a-here", map[string]any{"db": "a", "dbNamespace": ns}),
		newObject("RegionalApp", other, "reads-own-a", map[string]any{"db": "a"}),
		newObject("RegionalApp", ns, "reads-b-here", map[string]any{"db": "b", "dbNamespace": ns}),
	}
	for _, r := range readers {
		create(t, r)
	}
	dbA := newObject("Database", ns, "a", map[string]any{})
	dbB := newObject("Database", ns, "b", map[string]any{})

	for _, tc := range []struct {
		crd  string
		db   *unstructured.Unstructured
		want []string
	}{
		{"gadget", dbA, []string{ns + "/no-dbs", ns + "/reads-a"}},
		{"gadget", dbB, []string{ns + "/no-dbs", ns + "/reads-b"}},
		{"regional", dbA, []string{other + "/reads-a-here"}},
		{"regional", dbB, []string{ns + "/reads-b-here"}},
	} {
		mapFunc := eng.enqueueCrossReaders(eng.crds[tc.crd], "database")
		// Poll until the cache holds every reader: then the answer is final.
		eventually(t, fmt.Sprintf("%s readers of Database %s", tc.crd, tc.db.GetName()), func(ctx context.Context) error {
			var got []string
			for _, req := range mapFunc(ctx, tc.db) {
				got = append(got, req.String())
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				return fmt.Errorf("enqueued %v, want %v", got, tc.want)
			}
			return nil
		})
	}
	// A Database in the other namespace named a: the Gadget there and the RegionalApp
	// that reads its own namespace read it; the RegionalApp pointing at ns does not.
	dbThere := newObject("Database", other, "a", map[string]any{})
	for crd, want := range map[string]string{"gadget": other + "/reads-a-there", "regional": other + "/reads-own-a"} {
		var got []string
		for _, req := range eng.enqueueCrossReaders(eng.crds[crd], "database")(context.Background(), dbThere) {
			got = append(got, req.String())
		}
		if !slices.Equal(got, []string{want}) {
			t.Errorf("%s readers of Database %s/a: %v, want [%s]", crd, other, got, want)
		}
	}
}

// TestCrossWatchReconcilesReader: end to end, a cross-referenced custom resource created
// after its reader reconciles the reader, whose status then shows it.
func TestCrossWatchReconcilesReader(t *testing.T) {
	ns := env.Namespace(t)
	k := mustParse(t, "crossstatus.yaml", `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: crossstatus}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      resync: 1h
      operatorBox:
        cross:
          - {crd: database, selector: {name: "{{ .spec.db }}"}, as: db}
        status:
          fields:
            - {path: db, value: missing}
            - {path: db, value: found, when: [{field: cross.db.found, equals: "true"}]}
    database:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Database, plural: databases}
      resync: 1h
`)
	startEngine(t, []*Katalog{k}, testOptions(), ns)
	g := newObject("Gadget", ns, "g", map[string]any{"db": "d"})
	create(t, g)
	waitStatus(t, g, "db", "missing")
	create(t, newObject("Database", ns, "d", map[string]any{}))
	waitStatus(t, g, "db", "found")
}

// waitStatus waits until status.<field> of obj is want.
func waitStatus(t *testing.T, obj *unstructured.Unstructured, field, want string) {
	t.Helper()
	eventually(t, fmt.Sprintf("%s status.%s %s", obj.GetName(), field, want), func(ctx context.Context) error {
		fresh := obj.DeepCopy()
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
			return err
		}
		if v, _, _ := unstructured.NestedString(fresh.Object, "status", field); v != want {
			return fmt.Errorf("status %v", fresh.Object["status"])
		}
		return nil
	})
}

// deleteAndWait deletes obj and waits until the API server no longer has it, running
// finish on its onDelete Job meanwhile.
func deleteAndWait(t *testing.T, obj *unstructured.Unstructured, job client.ObjectKey, finish func(context.Context, client.Client, client.ObjectKey) (*batchv1.Job, error)) {
	t.Helper()
	if err := env.Client.Delete(context.Background(), obj.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "onDelete Job "+job.Name+" finished", func(ctx context.Context) error {
		_, err := finish(ctx, env.Client, job)
		return err
	})
	eventually(t, obj.GetName()+" gone", func(ctx context.Context) error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopy()); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%w)", err)
		}
		return nil
	})
}

// onDeleteJobEvents returns the OnDeleteJobFailed events of ns regarding the custom
// resource name.
func onDeleteJobEvents(ctx context.Context, ns, name string) ([]eventsv1.Event, error) {
	var list eventsv1.EventList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var out []eventsv1.Event
	for _, ev := range list.Items {
		if ev.Reason == ReasonOnDeleteJobFailed && ev.Regarding.Name == name {
			out = append(out, ev)
		}
	}
	return out, nil
}

// TestOnDeleteJobFailedWarns: an onDelete Job that completed ends the deletion without
// an event; one that failed for good ends it as well (the finalizer is removed, the
// custom resource goes) and leaves a Warning event on the custom resource naming the Job.
func TestOnDeleteJobFailedWarns(t *testing.T) {
	ns := env.Namespace(t)
	startEngine(t, []*Katalog{mustParse(t, "deletion.yaml", deleteKatalog)}, testOptions(), ns)

	ok := newObject("Gadget", ns, "ok", map[string]any{})
	bad := newObject("Gadget", ns, "bad", map[string]any{})
	for _, g := range []*unstructured.Unstructured{ok, bad} {
		create(t, g)
		waitReady(t, g, metav1.ConditionTrue, ReasonReconciled)
	}
	deleteAndWait(t, ok, client.ObjectKey{Namespace: ns, Name: "ok-cleanup"}, simulate.MarkJobComplete)
	deleteAndWait(t, bad, client.ObjectKey{Namespace: ns, Name: "bad-cleanup"}, simulate.MarkJobFailed)

	eventually(t, "OnDeleteJobFailed event for bad", func(ctx context.Context) error {
		evs, err := onDeleteJobEvents(ctx, ns, "bad")
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if ev.Type == corev1.EventTypeWarning && strings.Contains(ev.Note, ns+"/bad-cleanup") &&
				ev.Related != nil && ev.Related.Kind == "Job" && ev.Related.Name == "bad-cleanup" {
				return nil
			}
		}
		return fmt.Errorf("no Warning event naming %s/bad-cleanup among %+v", ns, evs)
	})
	// The events of one recorder arrive in order: the completed Job's deletion, earlier,
	// would have shown by now.
	evs, err := onDeleteJobEvents(context.Background(), ns, "ok")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) > 0 {
		t.Errorf("a completed onDelete Job emitted %+v", evs)
	}
}

const widgetKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: widgets}
spec:
  crds:
    widget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Widget, plural: widgets}
      operatorBox:
        onReconcile:
          configMaps:
            - {name: "{{ .metadata.name }}", data: {k: v}}
`

// TestStatusNotServed: a custom resource whose CRD serves no status subresource gets a
// 404 on every status write although it exists; the pass reports it with an error
// wrapping reconcile.ErrStatusNotServed naming the custom resource, instead of dropping
// the status as if the custom resource were gone.
func TestStatusNotServed(t *testing.T) {
	ns := env.Namespace(t)
	w := newObject("Widget", ns, "w", map[string]any{})
	create(t, w)
	e := passEngine(env.Client, mustParse(t, "widgets.yaml", widgetKatalog))
	_, err := e.recs["widget"].Reconcile(context.Background(), reconcileRequest(w))
	if !errors.Is(err, reconcile.ErrStatusNotServed) {
		t.Fatalf("pass over a Widget: %v, want ErrStatusNotServed", err)
	}
	if !strings.Contains(err.Error(), "Widget "+ns+"/w") {
		t.Errorf("error %q does not name Widget %s/w", err, ns)
	}
	if err := getConfigMap(context.Background(), ns, "w"); err != nil {
		t.Errorf("the pass before the status write: ConfigMap w: %v", err)
	}
}

// TestStatusWriteNotFound: a status write answered 404 is confirmed with the API reader.
// A custom resource deleted during the pass needs no status: the pass succeeds. One that
// the read still finds is ErrStatusNotServed; a read that fails is an error as well.
func TestStatusWriteNotFound(t *testing.T) {
	k := mustParse(t, "faults.yaml", faultKatalog)
	internal := apierrors.NewInternalError(errors.New("injected"))
	ww, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		// onStatus runs instead of the status write; notFoundGet fails the Get after it.
		onStatus func(ctx context.Context, c client.Client, obj client.Object) error
		failGet  bool
		check    func(t *testing.T, err error)
	}{
		{
			name: "gone",
			onStatus: func(ctx context.Context, c client.Client, obj client.Object) error {
				if err := env.Client.Delete(ctx, obj.DeepCopyObject().(client.Object)); err != nil {
					return err
				}
				return c.Status().Update(ctx, obj) // the real 404 of a deleted object
			},
			check: func(t *testing.T, err error) {
				if err != nil {
					t.Errorf("pass over a custom resource deleted meanwhile: %v", err)
				}
			},
		},
		{
			name: "there",
			onStatus: func(_ context.Context, _ client.Client, obj client.Object) error {
				return apierrors.NewNotFound(schema.GroupResource{Group: "platform.io", Resource: "gadgets"}, obj.GetName())
			},
			check: func(t *testing.T, err error) {
				if !errors.Is(err, reconcile.ErrStatusNotServed) || !strings.Contains(err.Error(), "Gadget ") {
					t.Errorf("404 for a custom resource that is there: %v, want ErrStatusNotServed naming the Gadget", err)
				}
			},
		},
		{
			name: "read fails",
			onStatus: func(_ context.Context, _ client.Client, obj client.Object) error {
				return apierrors.NewNotFound(schema.GroupResource{Group: "platform.io", Resource: "gadgets"}, obj.GetName())
			},
			failGet: true,
			check: func(t *testing.T, err error) {
				if err == nil || errors.Is(err, reconcile.ErrStatusNotServed) || !errors.Is(err, internal) ||
					!strings.Contains(err.Error(), "get after the 404") {
					t.Errorf("404 and a failed read: %v, want the read's error", err)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := env.Namespace(t)
			g := newObject("Gadget", ns, "g", map[string]any{})
			create(t, g)
			wrote := false
			c := interceptor.NewClient(ww, interceptor.Funcs{
				SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					if sub != "status" {
						return c.SubResource(sub).Update(ctx, obj, opts...)
					}
					wrote = true
					return tc.onStatus(ctx, c, obj)
				},
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if wrote && tc.failGet {
						return internal
					}
					return c.Get(ctx, key, obj, opts...)
				},
			})
			_, err := passEngine(c, k).recs["gadget"].Reconcile(context.Background(), reconcileRequest(g))
			if !wrote {
				t.Fatalf("the pass wrote no status (%v)", err)
			}
			tc.check(t, err)
		})
	}
}

const saCronKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: sacron}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      resync: 1h
      operatorBox:
        onReconcile:
          serviceAccounts:
            - name: "{{ .metadata.name }}-runner"
          cronJobs:
            - name: "{{ .metadata.name }}-backup"
              schedule: "{{ .spec.schedule }}"
              image: "{{ .spec.image }}"
              command: [sh, -c]
              args: ["backup {{ .metadata.name }}"]
              env: {TARGET: "{{ .spec.target }}"}
`

// TestServiceAccountAndCronJob: the declared ServiceAccount and CronJob exist with the
// custom resource as controller, the engine's labels and the declared fields, and drift
// of either is repaired.
func TestServiceAccountAndCronJob(t *testing.T) {
	ns := env.Namespace(t)
	startEngine(t, []*Katalog{mustParse(t, "sacron.yaml", saCronKatalog)}, testOptions(), ns)
	g := newObject("Gadget", ns, "g", map[string]any{"schedule": "*/5 * * * *", "image": "busybox:1.37", "target": "s3://b"})
	create(t, g)
	waitReady(t, g, metav1.ConditionTrue, ReasonReconciled)
	fresh := g.DeepCopy()
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(g), fresh); err != nil {
		t.Fatal(err)
	}
	wantLabels := childLabels("g", "gadget")
	checkChild := func(obj client.Object) {
		t.Helper()
		ref := metav1.GetControllerOf(obj)
		if ref == nil || ref.UID != fresh.GetUID() || ref.Kind != "Gadget" {
			t.Errorf("%s: controller %+v, want Gadget g", obj.GetName(), ref)
		}
		for k, v := range wantLabels {
			if obj.GetLabels()[k] != v {
				t.Errorf("%s: label %s=%q, want %q", obj.GetName(), k, obj.GetLabels()[k], v)
			}
		}
	}

	saKey := client.ObjectKey{Namespace: ns, Name: "g-runner"}
	sa := &corev1.ServiceAccount{}
	if err := env.Client.Get(context.Background(), saKey, sa); err != nil {
		t.Fatal(err)
	}
	checkChild(sa)

	cjKey := client.ObjectKey{Namespace: ns, Name: "g-backup"}
	cj := &batchv1.CronJob{}
	if err := env.Client.Get(context.Background(), cjKey, cj); err != nil {
		t.Fatal(err)
	}
	checkChild(cj)
	if cj.Spec.Schedule != "*/5 * * * *" {
		t.Errorf("schedule %q", cj.Spec.Schedule)
	}
	pod := cj.Spec.JobTemplate.Spec.Template
	if pod.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("restartPolicy %q", pod.Spec.RestartPolicy)
	}
	if pod.Labels[CRDLabel] != "gadget" || pod.Labels[OwnerLabel] != "g" {
		t.Errorf("pod template labels %v", pod.Labels)
	}
	ctr := pod.Spec.Containers[0]
	wantEnv := []corev1.EnvVar{{Name: "TARGET", Value: "s3://b"}}
	if ctr.Name != containerName || ctr.Image != "busybox:1.37" || !slices.Equal(ctr.Command, []string{"sh", "-c"}) ||
		!slices.Equal(ctr.Args, []string{"backup g"}) || !slices.Equal(ctr.Env, wantEnv) {
		t.Errorf("container %+v", ctr)
	}

	// Drift: someone changes the schedule and suspends the CronJob, and strips the
	// ServiceAccount's labels.
	cj.Spec.Schedule = "0 0 * * *"
	if err := env.Client.Update(context.Background(), cj); err != nil {
		t.Fatal(err)
	}
	sa.Labels = nil
	if err := env.Client.Update(context.Background(), sa); err != nil {
		t.Fatal(err)
	}
	eventually(t, "drift repaired", func(ctx context.Context) error {
		cj, sa := &batchv1.CronJob{}, &corev1.ServiceAccount{}
		if err := env.Client.Get(ctx, cjKey, cj); err != nil {
			return err
		}
		if err := env.Client.Get(ctx, saKey, sa); err != nil {
			return err
		}
		if cj.Spec.Schedule != "*/5 * * * *" {
			return fmt.Errorf("schedule %q", cj.Spec.Schedule)
		}
		if sa.Labels[CRDLabel] != "gadget" || sa.Labels[OwnerLabel] != "g" {
			return fmt.Errorf("ServiceAccount labels %v", sa.Labels)
		}
		return nil
	})
}

const onCreateKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: oncreate}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      resync: 1h
      operatorBox:
        onCreate:
          configMaps:
            - {name: "{{ .metadata.name }}-cfg", data: {k: declared}}
`

// TestOnCreateExistingObject: an onCreate object the custom resource controls is left as
// it is (an edit stays); one that is someone else's, has no controller or is being
// deleted is neither taken over nor deleted, and Ready says why naming it; one without a
// controller that carries the adopt annotation is adopted.
func TestOnCreateExistingObject(t *testing.T) {
	ns := env.Namespace(t)
	eng, _ := startEngine(t, []*Katalog{mustParse(t, "oncreate.yaml", onCreateKatalog)}, testOptions(), ns)
	ctx := context.Background()

	// Controlled: created once, then left alone.
	mine := newObject("Gadget", ns, "mine", map[string]any{})
	create(t, mine)
	waitReady(t, mine, metav1.ConditionTrue, ReasonReconciled)
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: ns, Name: "mine-cfg"}
	if err := env.Client.Get(ctx, key, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "edited"
	if err := env.Client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the cache sees the edit", func(ctx context.Context) error {
		seen := &corev1.ConfigMap{}
		if err := eng.reader.Get(ctx, key, seen); err != nil {
			return err
		}
		if seen.Data["k"] != "edited" {
			return fmt.Errorf("cache has %v", seen.Data)
		}
		return nil
	})
	if _, err := eng.recs["gadget"].Reconcile(ctx, reconcileRequest(mine)); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, key, cm); err != nil || cm.Data["k"] != "edited" {
		t.Errorf("the onCreate ConfigMap the custom resource controls was rewritten: %v %v", err, cm.Data)
	}

	// Someone else's: controlled by another Gadget.
	owner := newObject("Gadget", ns, "owner", map[string]any{})
	create(t, owner)
	theirs := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "theirs-cfg", Namespace: ns, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "platform.io/v1alpha1", Kind: "Gadget", Name: "owner", UID: owner.GetUID(), Controller: ptr.To(true),
		}}},
		Data: map[string]string{"k": "theirs"},
	}
	unowned := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "unowned-cfg", Namespace: ns}, Data: map[string]string{"k": "theirs"}}
	create(t, theirs)
	create(t, unowned)
	deleting := env.CreateBeingDeleted(t, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "deleting-cfg", Namespace: ns}, Data: map[string]string{"k": "theirs"},
	}).(*corev1.ConfigMap)
	adoptable := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "adopt-cfg", Namespace: ns, Annotations: map[string]string{apply.AdoptAnnotation: "true"},
	}, Data: map[string]string{"k": "theirs"}}
	create(t, adoptable)

	for _, tc := range []struct {
		cr     string
		obj    *corev1.ConfigMap
		causes []string // one of them
	}{
		{"theirs", theirs, []string{"is controlled by Gadget owner"}},
		{"unowned", unowned, []string{"has no controller"}},
		{"deleting", deleting, []string{apply.ErrBeingDeleted.Error(), "has no controller"}},
	} {
		cr := newObject("Gadget", ns, tc.cr, map[string]any{})
		create(t, cr)
		c := waitReady(t, cr, metav1.ConditionFalse, ReasonReconcileFailed)
		says := slices.ContainsFunc(tc.causes, func(s string) bool { return strings.Contains(c.Message, s) })
		if !strings.Contains(c.Message, "ConfigMap "+ns+"/"+tc.obj.Name) || !says {
			t.Errorf("%s: Ready message %q does not name ConfigMap %s/%s and one of %q", tc.cr, c.Message, ns, tc.obj.Name, tc.causes)
		}
		got := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(tc.obj), got); err != nil {
			t.Errorf("%s: the existing ConfigMap is gone: %v", tc.cr, err)
			continue
		}
		if got.Data["k"] != "theirs" || !slices.Equal(refUIDs(got), refUIDs(tc.obj)) {
			t.Errorf("%s: the existing ConfigMap was taken: data %v, owners %+v", tc.cr, got.Data, got.OwnerReferences)
		}
	}
	adopter := newObject("Gadget", ns, "adopt", map[string]any{})
	create(t, adopter)
	waitReady(t, adopter, metav1.ConditionTrue, ReasonReconciled)
	got := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(adoptable), got); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(got); ref == nil || ref.Name != "adopt" || got.Data["k"] != "declared" {
		t.Errorf("the annotated ConfigMap was not adopted: controller %+v, data %v", ref, got.Data)
	}
}

func refUIDs(obj client.Object) []string {
	var out []string
	for _, r := range obj.GetOwnerReferences() {
		out = append(out, string(r.UID))
	}
	return out
}
