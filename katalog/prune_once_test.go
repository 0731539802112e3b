package katalog

import (
	"context"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// keepKatalog declares, behind one gate (spec.on equals "yes"), what cannot be made again
// as it was: a once Secret with a generated password (in onReconcile), an onCreate
// ConfigMap and Secret, an onReconcile Job; and, for comparison, an onReconcile
// ConfigMap, which a pass makes again at will. The forEach ConfigMap of onCreate is
// ungated: removing its element removes its declaration for that element.
const keepKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: keep}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      resync: 1h
      operatorBox:
        onCreate:
          configMaps:
            - name: "{{ .metadata.name }}-created"
              data: {k: v}
              when: [{field: spec.on, equals: "yes"}]
            - name: "{{ .metadata.name }}-each-{{ .item }}"
              data: {k: "{{ .item }}"}
              forEach: {field: spec.items}
          secrets:
            - name: "{{ .metadata.name }}-created"
              data: {token: "{{ randomAlphanumeric 16 }}"}
              when: [{field: spec.on, equals: "yes"}]
        onReconcile:
          secrets:
            - name: "{{ .metadata.name }}-password"
              once: true
              data: {password: "{{ randomAlphanumeric 32 }}"}
              when: [{field: spec.on, equals: "yes"}]
          jobs:
            - name: "{{ .metadata.name }}-migrate"
              image: busybox
              anyOf: [{field: spec.on, equals: "yes"}]
          configMaps:
            - name: "{{ .metadata.name }}-live"
              data: {k: v}
              when: [{field: spec.on, equals: "yes"}]
`

// keepKatalogWithout is keepKatalog with the once Secret's and the onCreate ConfigMap's
// declarations removed.
func keepKatalogWithout(t *testing.T) *Katalog {
	t.Helper()
	text := strings.Replace(keepKatalog, `
            - name: "{{ .metadata.name }}-password"
              once: true
              data: {password: "{{ randomAlphanumeric 32 }}"}
              when: [{field: spec.on, equals: "yes"}]`, "", 1)
	text = strings.Replace(text, `
            - name: "{{ .metadata.name }}-created"
              data: {k: v}
              when: [{field: spec.on, equals: "yes"}]`, "", 1)
	if text == keepKatalog || !strings.Contains(text, "migrate") || strings.Contains(text, "-password") {
		t.Fatal("keepKatalogWithout: the declarations to remove were not found")
	}
	return mustParse(t, "keep-without.yaml", text)
}

func secretData(ctx context.Context, ns, name, key string) (string, error) {
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		return "", err
	}
	return string(s.Data[key]), nil
}

func gone(ctx context.Context, obj client.Object, ns, name string) error {
	switch err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("%T %s still there", obj, name)
}

// TestGateFlipKeepsWhatCannotBeMadeAgain: a gate turning false deletes the onReconcile
// ConfigMap it gates, but never the once Secret, the onCreate objects or the Job: when
// the gate turns true again the password is the one generated first. What is deleted is
// what no declaration names any more: an onCreate ConfigMap whose forEach element is gone,
// and, under a Katalog without their declarations, the once Secret and the onCreate
// ConfigMap.
func TestGateFlipKeepsWhatCannotBeMadeAgain(t *testing.T) {
	ns := env.Namespace(t)
	mgr, _, stop, err := env.RunManager(ctrl.Options{Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = stop()
		}
	})
	if _, err := NewEngine(mgr, []*Katalog{mustParse(t, "keep.yaml", keepKatalog)}, testOptions()); err != nil {
		t.Fatal(err)
	}

	g := newObject("Gadget", ns, "g", map[string]any{"on": "yes", "items": []any{"x", "y"}})
	create(t, g)
	waitReady(t, g, metav1.ConditionTrue, ReasonReconciled)
	password := secretValue(t, ns, "g-password", "password")
	token := secretValue(t, ns, "g-created", "token")
	for _, name := range []string{"g-created", "g-live", "g-each-x", "g-each-y"} {
		if err := getConfigMap(context.Background(), ns, name); err != nil {
			t.Fatalf("ConfigMap %s: %v", name, err)
		}
	}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "g-migrate"}, &batchv1.Job{}); err != nil {
		t.Fatalf("Job g-migrate: %v", err)
	}

	// The gate turns false: the pass that deletes g-live (prune goes over Secrets, then
	// ConfigMaps, then Jobs in one sweep) leaves the rest alone.
	patchSpec(t, g, map[string]any{"on": "no"})
	eventually(t, "g-live deleted", func(ctx context.Context) error { return gone(ctx, &corev1.ConfigMap{}, ns, "g-live") })
	waitReady(t, g, metav1.ConditionTrue, ReasonReconciled)
	ctx := context.Background()
	if got, err := secretData(ctx, ns, "g-password", "password"); err != nil || got != password {
		t.Fatalf("once Secret g-password after the gate turned false: %v (changed: %t)", err, got != password)
	}
	if got, err := secretData(ctx, ns, "g-created", "token"); err != nil || got != token {
		t.Fatalf("onCreate Secret g-created after the gate turned false: %v (changed: %t)", err, got != token)
	}
	if err := getConfigMap(ctx, ns, "g-created"); err != nil {
		t.Fatalf("onCreate ConfigMap g-created after the gate turned false: %v", err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "g-migrate"}, &batchv1.Job{}); err != nil {
		t.Fatalf("Job g-migrate after the gate turned false: %v", err)
	}

	// The gate turns true again: g-live comes back, the password is the first one.
	patchSpec(t, g, map[string]any{"on": "yes"})
	eventually(t, "g-live again", func(ctx context.Context) error { return getConfigMap(ctx, ns, "g-live") })
	if got := secretValue(t, ns, "g-password", "password"); got != password {
		t.Error("the once Secret's password was regenerated after a gate flip")
	}

	// A forEach element removed: its onCreate ConfigMap has no declaration left.
	patchSpec(t, g, map[string]any{"items": []any{"x"}})
	eventually(t, "g-each-y deleted", func(ctx context.Context) error { return gone(ctx, &corev1.ConfigMap{}, ns, "g-each-y") })
	if err := getConfigMap(ctx, ns, "g-each-x"); err != nil {
		t.Fatalf("g-each-x: %v", err)
	}

	// The declarations removed from the Katalog: a new engine deletes what they made.
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	startEngine(t, []*Katalog{keepKatalogWithout(t)}, testOptions(), ns)
	eventually(t, "g-password deleted", func(ctx context.Context) error { return gone(ctx, &corev1.Secret{}, ns, "g-password") })
	eventually(t, "g-created ConfigMap deleted", func(ctx context.Context) error { return gone(ctx, &corev1.ConfigMap{}, ns, "g-created") })
	if got, err := secretData(ctx, ns, "g-created", "token"); err != nil || got != token {
		t.Errorf("onCreate Secret g-created, still declared: %v (changed: %t)", err, got != token)
	}
}
