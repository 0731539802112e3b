package katalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// tenantsKatalog: Gadgets depend on Databases being healthy; a Database fails its
// reconciles while its spec.port is no port number. Gadgets declare onDelete, so they
// carry the finalizer.
const tenantsKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: tenants}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      resync: 1h
      dependsOn: {database: healthy}
      operatorBox:
        onReconcile:
          configMaps:
            - {name: "{{ .metadata.name }}", data: {v: "{{ .spec.v }}"}}
        onDelete:
          configMaps:
            - {name: "{{ .metadata.name }}-bye", data: {k: v}}
    database:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Database, plural: databases}
      resync: 1h
      operatorBox:
        onReconcile:
          services:
            - {name: "{{ .metadata.name }}-db", port: "{{ .spec.port }}"}
`

func configMapValue(ctx context.Context, ns, name, key string) (string, error) {
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
		return "", err
	}
	return cm.Data[key], nil
}

// TestDependsOnPerNamespace: a Database that keeps failing in team-a holds back the
// Gadgets of team-a only (Ready False, WaitingForDependency, naming the namespace); a
// Gadget in team-b, whose Databases are healthy, carries on. A Gadget of team-a that is
// deleted meanwhile does not wait: its onDelete runs and it is gone.
func TestDependsOnPerNamespace(t *testing.T) {
	teamA, teamB := env.Namespace(t), env.Namespace(t)
	eng, _ := startEngine(t, []*Katalog{mustParse(t, "tenants.yaml", tenantsKatalog)}, testOptions(), teamA, teamB)

	dbA := newObject("Database", teamA, "a", map[string]any{"port": "5432"})
	dbB := newObject("Database", teamB, "b", map[string]any{"port": "5432"})
	ga := newObject("Gadget", teamA, "ga", map[string]any{"v": "1"})
	gb := newObject("Gadget", teamB, "gb", map[string]any{"v": "1"})
	for _, o := range []client.Object{dbA, dbB} {
		create(t, o)
	}
	waitReady(t, dbA, metav1.ConditionTrue, ReasonReconciled)
	waitReady(t, dbB, metav1.ConditionTrue, ReasonReconciled)
	for _, o := range []client.Object{ga, gb} {
		create(t, o)
	}
	waitReady(t, ga, metav1.ConditionTrue, ReasonReconciled)
	waitReady(t, gb, metav1.ConditionTrue, ReasonReconciled)

	// team-a's Database breaks for good; its last reconcile is a failure.
	patchSpec(t, dbA, map[string]any{"port": "not-a-port"})
	waitReady(t, dbA, metav1.ConditionFalse, ReasonReconcileFailed)
	if _, err := eng.recs["database"].Reconcile(context.Background(), reconcileRequest(dbA)); err == nil {
		t.Fatal("the broken Database's pass succeeded")
	}
	if eng.Healthy("database") {
		t.Error("Healthy(database) while its last reconcile failed")
	}
	if h, _ := eng.Health("gadget"); !slices.Equal(h.WaitingFor, []string{"database"}) {
		t.Errorf("Health(gadget).WaitingFor = %v, want [database]", h.WaitingFor)
	}

	// team-b carries on.
	patchSpec(t, gb, map[string]any{"v": "2"})
	eventually(t, "team-b's Gadget reconciled", func(ctx context.Context) error {
		if v, err := configMapValue(ctx, teamB, "gb", "v"); err != nil || v != "2" {
			c, _ := readyCondition(ctx, gb)
			return fmt.Errorf("ConfigMap gb v=%q (%w); Ready %+v", v, err, c)
		}
		return nil
	})
	waitReady(t, gb, metav1.ConditionTrue, ReasonReconciled)

	// team-a waits, and says for what and where.
	patchSpec(t, ga, map[string]any{"v": "2"})
	c := waitReady(t, ga, metav1.ConditionFalse, ReasonWaitingForDependency)
	if !strings.Contains(c.Message, "database") || !strings.Contains(c.Message, teamA) {
		t.Errorf("Ready message %q does not name the dependency and the namespace", c.Message)
	}
	if v, err := configMapValue(context.Background(), teamA, "ga", "v"); err != nil || v != "1" {
		t.Errorf("ConfigMap ga of the waiting Gadget: v=%q, %v; want 1", v, err)
	}

	// Deleting team-a's Gadget does not wait for the Database.
	if err := env.Client.Delete(context.Background(), ga.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "team-a's Gadget gone", func(ctx context.Context) error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ga), ga.DeepCopy()); !apierrors.IsNotFound(err) {
			c, _ := readyCondition(ctx, ga)
			return fmt.Errorf("still there (%w); Ready %+v", err, c)
		}
		return nil
	})
	if err := getConfigMap(context.Background(), teamA, "ga-bye"); err != nil {
		t.Errorf("onDelete ConfigMap ga-bye: %v", err)
	}
}

// TestHealthWindowPerNamespace: a namespace's failure counts for that namespace until
// window successes there followed it; a cluster-scoped custom resource's failure counts
// for every namespace.
func TestHealthWindowPerNamespace(t *testing.T) {
	h := newHealth(2)
	failure := errors.New("boom")
	h.record("a", failure)
	if !h.failedIn("a") || h.failedIn("b") || !h.failedIn(anyNamespace) {
		t.Fatalf("after a failure in a: a %t, b %t, any %t", h.failedIn("a"), h.failedIn("b"), h.failedIn(anyNamespace))
	}
	h.record("b", nil)
	h.record("a", nil)
	if !h.failedIn("a") {
		t.Error("a's failure left the window of 2 after one success")
	}
	h.record("a", nil)
	if h.failedIn("a") || h.failedIn(anyNamespace) || len(h.failing) != 0 {
		t.Errorf("after two successes in a: a %t, any %t, %d namespaces kept", h.failedIn("a"), h.failedIn(anyNamespace), len(h.failing))
	}
	h.record("", failure)
	if !h.failedIn("b") {
		t.Error("a cluster-scoped failure does not count for namespace b")
	}
}
