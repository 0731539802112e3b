package katalog

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func getConfigMap(ctx context.Context, ns, name string) error {
	return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ConfigMap{})
}

func patchSpec(t *testing.T, obj *unstructured.Unstructured, spec map[string]any) {
	t.Helper()
	eventually(t, "update spec", func(ctx context.Context) error {
		fresh := obj.DeepCopy()
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
			return err
		}
		for k, v := range spec {
			if err := unstructured.SetNestedField(fresh.Object, v, "spec", k); err != nil {
				return err
			}
		}
		return env.Client.Update(ctx, fresh)
	})
}

const gateKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: gates}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      resync: 1h
      operatorBox:
        onReconcile:
          configMaps:
            - name: "{{ .metadata.name }}-a"
              data: {k: a}
              when:
                - {field: spec.a, equals: "on"}
            - name: "{{ .metadata.name }}-b"
              data: {k: b}
              anyOf:
                - {field: spec.b, equals: "on"}
                - {field: spec.b, equals: "yes"}
`

// TestGateOffDeletesOwnedChildOnly: a declaration whose conditions stop holding loses its
// object when the custom resource controls it; an object of the same name and labels that
// the custom resource does not control is left alone.
func TestGateOffDeletesOwnedChildOnly(t *testing.T) {
	ns := env.Namespace(t)
	startEngine(t, []*Katalog{mustParse(t, "gates.yaml", gateKatalog)}, testOptions(), ns)
	// g-b exists already, made by someone else, with the labels the engine's children carry.
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "g-b", Namespace: ns, Labels: childLabels("g", "gadget")}, Data: map[string]string{"k": "theirs"}}
	create(t, foreign)

	g := newObject("Gadget", ns, "g", map[string]any{"a": "on", "b": "off"})
	create(t, g)
	waitReady(t, g, metav1.ConditionTrue, ReasonReconciled)
	if err := getConfigMap(context.Background(), ns, "g-a"); err != nil {
		t.Fatalf("g-a: %v", err)
	}

	patchSpec(t, g, map[string]any{"a": "off"})
	eventually(t, "g-a deleted", func(ctx context.Context) error {
		if err := getConfigMap(ctx, ns, "g-a"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("g-a still there (%w)", err)
		}
		return nil
	})
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(foreign), cm); err != nil {
		t.Fatalf("someone else's ConfigMap was deleted: %v", err)
	}
	if cm.Data["k"] != "theirs" || len(cm.OwnerReferences) != 0 {
		t.Errorf("someone else's ConfigMap was changed: %+v", cm)
	}

	// anyOf: one of the conditions is enough. g-b is someone else's, so the pass fails
	// naming it, and leaves it alone.
	patchSpec(t, g, map[string]any{"b": "yes"})
	c := waitReady(t, g, metav1.ConditionFalse, ReasonReconcileFailed)
	if !strings.Contains(c.Message, "g-b") {
		t.Errorf("Ready message %q does not name g-b", c.Message)
	}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(foreign), cm); err != nil || cm.Data["k"] != "theirs" {
		t.Errorf("someone else's ConfigMap was taken: %v %+v", err, cm.Data)
	}
}

// TestForEachListAndMap runs the forEach Katalog: one Deployment per list element and per
// map key (sorted), the map value under .value, the mutation default applied first; an
// element removed from the list loses its Deployment.
func TestForEachListAndMap(t *testing.T) {
	ns := env.Namespace(t)
	k, err := Load(filepath.Join("testdata", "foreach.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	startEngine(t, []*Katalog{k}, testOptions(), ns)
	app := newObject("RegionalApp", ns, "r", map[string]any{
		"image":       "nginx",
		"defaultPort": int64(8080),
		"regions":     []any{"us-east-1", "eu-west-1"},
		"zones": map[string]any{
			"b": map[string]any{"replicas": int64(3), "port": int64(8081)},
			"a": map[string]any{},
		},
	})
	create(t, app)
	waitReady(t, app, metav1.ConditionTrue, ReasonReconciled)

	want := map[string][2]int32{ // replicas, port (0: none)
		"r-us-east-1": {1, 0}, "r-eu-west-1": {1, 0}, "r-a": {1, 8080}, "r-b": {3, 8081},
	}
	for name, w := range want {
		dep, err := getDeployment(context.Background(), ns, name)
		if err != nil {
			t.Errorf("Deployment %s: %v", name, err)
			continue
		}
		var port int32
		if ports := dep.Spec.Template.Spec.Containers[0].Ports; len(ports) > 0 {
			port = ports[0].ContainerPort
		}
		if got := [2]int32{*dep.Spec.Replicas, port}; got != w {
			t.Errorf("Deployment %s: replicas, port = %v, want %v", name, got, w)
		}
	}

	patchSpec(t, app, map[string]any{"regions": []any{"eu-west-1"}})
	eventually(t, "r-us-east-1 pruned", func(ctx context.Context) error {
		if _, err := getDeployment(ctx, ns, "r-us-east-1"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%w)", err)
		}
		return nil
	})
	if _, err := getDeployment(context.Background(), ns, "r-eu-west-1"); err != nil {
		t.Errorf("r-eu-west-1: %v", err)
	}
}

func TestExpandMapKeysSorted(t *testing.T) {
	d := passData{"spec": map[string]any{"m": map[string]any{"z": 1, "a": 2, "k": 3}}}
	reps, err := expand(&ForEach{Field: "spec.m", As: "key"}, d)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range reps {
		keys = append(keys, r["key"].(string))
	}
	if !slices.Equal(keys, []string{"a", "k", "z"}) {
		t.Errorf("keys %v, want sorted", keys)
	}
	if _, err := expand(&ForEach{Field: "spec.m.a"}, d); !errors.Is(err, ErrRender) {
		t.Errorf("forEach over a number: %v, want ErrRender", err)
	}
}

const validationKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: validation}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      validation:
        rules:
          - {field: spec.image, operator: exists, action: deny}
          - {field: spec.size, lessThan: "10", action: warn, message: "sizes from 10 up are slow"}
      operatorBox:
        onReconcile:
          configMaps:
            - name: "{{ .metadata.name }}"
              data: {image: "{{ .spec.image }}"}
`

// TestValidationDenyAndWarn: a deny rule that fails sets Ready False naming the field and
// creates nothing; a warn rule that fails emits a Warning event and the pass goes on.
func TestValidationDenyAndWarn(t *testing.T) {
	ns := env.Namespace(t)
	startEngine(t, []*Katalog{mustParse(t, "validation.yaml", validationKatalog)}, testOptions(), ns)

	bad := newObject("Gadget", ns, "bad", map[string]any{"size": int64(1)})
	create(t, bad)
	c := waitReady(t, bad, metav1.ConditionFalse, ReasonValidationFailed)
	if !strings.Contains(c.Message, "spec.image") {
		t.Errorf("Ready message %q does not name spec.image", c.Message)
	}
	if err := getConfigMap(context.Background(), ns, "bad"); !apierrors.IsNotFound(err) {
		t.Errorf("a denied custom resource got its ConfigMap (%v)", err)
	}

	big := newObject("Gadget", ns, "big", map[string]any{"image": "nginx", "size": int64(20)})
	create(t, big)
	waitReady(t, big, metav1.ConditionTrue, ReasonReconciled)
	eventually(t, "Warning event", func(ctx context.Context) error {
		var list eventsv1.EventList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, ev := range list.Items {
			if ev.Regarding.Name == "big" && ev.Type == "Warning" && ev.Reason == ReasonValidationWarning &&
				strings.Contains(ev.Note, "spec.size") && strings.Contains(ev.Note, "slow") {
				return nil
			}
		}
		return fmt.Errorf("no ValidationWarning event for big among %d events", len(list.Items))
	})
}

const externalKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: external}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      operatorBox:
        onReconcile:
          external:
            - name: slow
              url: "{{ .spec.url }}"
              timeout: 200ms
              continueOnError: true
          configMaps:
            - name: "{{ .metadata.name }}"
              data: {called: "{{ .external.slow.called }}"}
        status:
          fields:
            - {path: check, value: failed, when: [{field: external.slow.error, exists: true}]}
    database:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Database, plural: databases}
      operatorBox:
        onReconcile:
          external:
            - name: slow
              url: "{{ .spec.url }}"
              timeout: 200ms
          configMaps:
            - name: "{{ .metadata.name }}-db"
              data: {called: "{{ .external.slow.called }}"}
`

// TestExternalTimeout: a call that outlives its timeout fails; with continueOnError the
// pass goes on with the error recorded under .external, without it the pass fails.
func TestExternalTimeout(t *testing.T) {
	ns := env.Namespace(t)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	startEngine(t, []*Katalog{mustParse(t, "external.yaml", externalKatalog)}, testOptions(), ns)

	g := newObject("Gadget", ns, "g", map[string]any{"url": srv.URL})
	create(t, g)
	waitReady(t, g, metav1.ConditionTrue, ReasonReconciled)
	eventually(t, "status.check", func(ctx context.Context) error {
		fresh := g.DeepCopy()
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(g), fresh); err != nil {
			return err
		}
		if v, _, _ := unstructured.NestedString(fresh.Object, "status", "check"); v != "failed" {
			return fmt.Errorf("status %v", fresh.Object["status"])
		}
		return nil
	})
	if err := getConfigMap(context.Background(), ns, "g"); err != nil {
		t.Errorf("continueOnError: the ConfigMap after the failed call is missing: %v", err)
	}

	db := newObject("Database", ns, "d", map[string]any{"url": srv.URL})
	create(t, db)
	c := waitReady(t, db, metav1.ConditionFalse, ReasonReconcileFailed)
	if !strings.Contains(c.Message, ErrExternalCall.Error()) || !strings.Contains(c.Message, "slow") {
		t.Errorf("Ready message %q does not name the failed call", c.Message)
	}
	if err := getConfigMap(context.Background(), ns, "d-db"); !apierrors.IsNotFound(err) {
		t.Errorf("the ConfigMap after a failed call without continueOnError exists (%v)", err)
	}
	if calls.Load() == 0 {
		t.Error("the registry stand-in was never called")
	}
}

const dependsKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: depends}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      dependsOn: {database: healthy}
      operatorBox:
        onReconcile:
          configMaps:
            - {name: "{{ .metadata.name }}", data: {k: v}}
    database:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Database, plural: databases}
      operatorBox:
        onReconcile:
          external:
            - {name: check, url: "{{ .spec.url }}", expectedStatus: 200}
`

// TestDependsOnWaits: while the Database CRD's reconciles fail it is not healthy, and the
// Gadget CRD that depends on it does nothing but say so; once they succeed, it proceeds.
func TestDependsOnWaits(t *testing.T) {
	ns := env.Namespace(t)
	var status atomic.Int32
	status.Store(http.StatusInternalServerError)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(int(status.Load())) }))
	t.Cleanup(srv.Close)
	eng, _ := startEngine(t, []*Katalog{mustParse(t, "depends.yaml", dependsKatalog)}, testOptions(), ns)

	db := newObject("Database", ns, "d", map[string]any{"url": srv.URL})
	create(t, db)
	waitReady(t, db, metav1.ConditionFalse, ReasonReconcileFailed)
	g := newObject("Gadget", ns, "g", map[string]any{})
	create(t, g)
	c := waitReady(t, g, metav1.ConditionFalse, ReasonWaitingForDependency)
	if !strings.Contains(c.Message, "database") {
		t.Errorf("Ready message %q does not name the dependency", c.Message)
	}
	if err := getConfigMap(context.Background(), ns, "g"); !apierrors.IsNotFound(err) {
		t.Errorf("the waiting CRD created its ConfigMap (%v)", err)
	}
	if h, _ := eng.Health("gadget"); !slices.Equal(h.WaitingFor, []string{"database"}) {
		t.Errorf("Health(gadget).WaitingFor = %v", h.WaitingFor)
	}
	if eng.Healthy("database") {
		t.Error("database is healthy while its reconciles fail")
	}

	status.Store(http.StatusOK)
	waitReady(t, db, metav1.ConditionTrue, ReasonReconciled)
	waitReady(t, g, metav1.ConditionTrue, ReasonReconciled)
	if err := getConfigMap(context.Background(), ns, "g"); err != nil {
		t.Errorf("ConfigMap after the dependency became healthy: %v", err)
	}
	if _, err := eng.Health("nope"); !errors.Is(err, ErrUnknownCRD) {
		t.Errorf("Health of an unknown CRD: %v", err)
	}
}

const deleteKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: deletion}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      operatorBox:
        onReconcile:
          configMaps:
            - {name: "{{ .metadata.name }}", data: {k: v}}
        onDelete:
          jobs:
            - {name: "{{ .metadata.name }}-cleanup", image: busybox, command: [echo, bye]}
`

// TestOnDeleteRunsJobsBeforeFinalizerRemoval: a custom resource whose CRD declares
// onDelete carries the finalizer; deleting it runs the onDelete Job and the custom
// resource is gone only once the Job finished.
func TestOnDeleteRunsJobsBeforeFinalizerRemoval(t *testing.T) {
	ns := env.Namespace(t)
	startEngine(t, []*Katalog{mustParse(t, "deletion.yaml", deleteKatalog)}, testOptions(), ns)
	g := newObject("Gadget", ns, "g", map[string]any{})
	create(t, g)
	waitReady(t, g, metav1.ConditionTrue, ReasonReconciled)
	fresh := g.DeepCopy()
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(g), fresh); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(fresh.GetFinalizers(), Finalizer) {
		t.Fatalf("finalizers %v lack %s", fresh.GetFinalizers(), Finalizer)
	}
	if err := env.Client.Delete(context.Background(), fresh); err != nil {
		t.Fatal(err)
	}
	waitReady(t, g, metav1.ConditionFalse, ReasonDeleting)
	key := client.ObjectKey{Namespace: ns, Name: "g-cleanup"}
	if _, err := markJobComplete(key); err != nil {
		t.Fatal(err)
	}
	eventually(t, "custom resource gone", func(ctx context.Context) error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(g), g.DeepCopy()); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%w)", err)
		}
		return nil
	})
}

// TestNamespaceFilter: a CRD that allows one namespace watches only that namespace (its
// cache is scoped) and one that restricts a namespace drops its events; the pass checks
// the namespace as well.
func TestNamespaceFilter(t *testing.T) {
	allowed, other := env.Namespace(t), env.Namespace(t)
	k := mustParse(t, "ns.yaml", fmt.Sprintf(`
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: ns}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      allowedNamespaces: [%s]
      operatorBox:
        onReconcile:
          configMaps:
            - {name: "{{ .metadata.name }}", data: {k: v}}
    database:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Database, plural: databases}
      restrictedNamespaces: [%s]
      operatorBox:
        onReconcile:
          configMaps:
            - {name: "{{ .metadata.name }}-db", data: {k: v}}
`, allowed, other))
	eng, _ := startEngine(t, []*Katalog{k}, testOptions(), allowed, other)

	in, out := newObject("Gadget", allowed, "in", map[string]any{}), newObject("Gadget", other, "out", map[string]any{})
	dbIn, dbOut := newObject("Database", allowed, "in", map[string]any{}), newObject("Database", other, "out", map[string]any{})
	for _, o := range []*unstructured.Unstructured{in, out, dbIn, dbOut} {
		create(t, o)
	}
	waitReady(t, in, metav1.ConditionTrue, ReasonReconciled)
	waitReady(t, dbIn, metav1.ConditionTrue, ReasonReconciled)

	// Tier 1: the Gadget cache does not hold the other namespace at all.
	if err := eng.reader.Get(context.Background(), client.ObjectKeyFromObject(out), out.DeepCopy()); err == nil {
		t.Error("the Gadget cache holds a custom resource outside the allowed namespace")
	}
	// Tier 3: a pass asked for a custom resource outside the namespaces does nothing.
	for _, tc := range []struct {
		crd string
		obj *unstructured.Unstructured
	}{{"gadget", out}, {"database", dbOut}} {
		res, err := eng.recs[tc.crd].Reconcile(context.Background(), reconcileRequest(tc.obj))
		if err != nil || !res.IsZero() {
			t.Errorf("%s pass outside the namespaces: %v, %v", tc.crd, res, err)
		}
	}
	// Tier 2 and 3: nothing was done in the other namespace.
	for _, name := range []string{"out", "out-db"} {
		if err := getConfigMap(context.Background(), other, name); !apierrors.IsNotFound(err) {
			t.Errorf("ConfigMap %s in the excluded namespace (%v)", name, err)
		}
	}
	for _, o := range []*unstructured.Unstructured{out, dbOut} {
		if _, err := readyCondition(context.Background(), o); !errors.Is(err, errNoReady) {
			t.Errorf("%s %s got a status: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

// TestNewEngineRefuses: a CRD declared twice across Katalogs is refused.
func TestNewEngineRefuses(t *testing.T) {
	kats := loadPlatform(t)
	mgr, _ := env.StartManager(t, ctrlOptions(env.Namespace(t)))
	if _, err := NewEngine(mgr, append(kats, kats[0]), testOptions()); !errors.Is(err, ErrEngine) {
		t.Errorf("NewEngine with a CRD twice: %v, want ErrEngine", err)
	}
	if _, err := NewEngine(mgr, nil, testOptions()); !errors.Is(err, ErrEngine) {
		t.Errorf("NewEngine without CRDs: %v, want ErrEngine", err)
	}
}
