package katalog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const forEachBoundKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: bounds}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      resync: 1h
      operatorBox:
        onReconcile:
          configMaps:
            - name: "{{ .metadata.name }}-{{ .item }}"
              forEach: {field: spec.items}
              data: {position: "{{ .index }}"}
            - name: "{{ .metadata.name }}-{{ .region }}"
              forEach: {field: spec.regions, as: region}
              data: {zone: "{{ .value }}"}
`

// forEachItems returns n list elements e0 ... e<n-1>.
func forEachItems(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf("e%d", i)
	}
	return out
}

// ownedConfigMapNames returns the names of the ConfigMaps in ns labelled for the custom
// resource name, read from the API server.
func ownedConfigMapNames(ctx context.Context, ns, name string) ([]string, error) {
	var list corev1.ConfigMapList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{OwnerLabel: name}); err != nil {
		return nil, err
	}
	var out []string
	for _, cm := range list.Items {
		out = append(out, cm.Name)
	}
	return out, nil
}

// TestForEachBoundDefault: without any option, a forEach over a list of
// DefaultMaxForEachElements+1 elements writes none of them; the pass fails with an error
// wrapping ErrForEachTooLarge and ErrRender, and Ready False names the declaration, the
// field and the bound.
func TestForEachBoundDefault(t *testing.T) {
	ns := env.Namespace(t)
	g := newObject("Gadget", ns, "big", map[string]any{"items": forEachItems(DefaultMaxForEachElements + 1)})
	create(t, g)
	e := passEngine(env.Client, mustParse(t, "bounds.yaml", forEachBoundKatalog))
	_, ready, err := passOnce(t, e, "gadget", g)
	if !errors.Is(err, ErrForEachTooLarge) || !errors.Is(err, ErrRender) {
		t.Fatalf("pass: %v, want ErrForEachTooLarge and ErrRender", err)
	}
	if ready.Status != metav1.ConditionFalse {
		t.Errorf("Ready %s, want False", ready.Status)
	}
	for _, want := range []string{"onReconcile.configMaps[0]", "spec.items", fmt.Sprint(DefaultMaxForEachElements + 1), fmt.Sprint(DefaultMaxForEachElements)} {
		if !strings.Contains(ready.Message, want) {
			t.Errorf("Ready message %q does not name %q", ready.Message, want)
		}
	}
	names, err := ownedConfigMapNames(context.Background(), ns, "big")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 0 {
		t.Errorf("%d ConfigMaps written for a forEach over the bound: %v", len(names), names)
	}
}

// TestForEachBoundOption: EngineOptions.MaxForEachElements moves the bound. A list and a
// map of exactly that many elements are written (index and value rendered); one element
// more makes Ready False naming the declaration and field, writes nothing of that
// expansion, and deletes nothing written before.
func TestForEachBoundOption(t *testing.T) {
	ns := env.Namespace(t)
	opts := testOptions()
	opts.MaxForEachElements = 3
	startEngine(t, []*Katalog{mustParse(t, "bounds.yaml", forEachBoundKatalog)}, opts, ns)

	g := newObject("Gadget", ns, "g", map[string]any{
		"items":   forEachItems(3),
		"regions": map[string]any{"a": "za", "b": "zb", "c": "zc"},
	})
	create(t, g)
	waitReady(t, g, metav1.ConditionTrue, ReasonReconciled)
	ctx := context.Background()
	for name, want := range map[string]map[string]string{
		"g-e0": {"position": "0"}, "g-e2": {"position": "2"}, "g-a": {"zone": "za"}, "g-c": {"zone": "zc"},
	} {
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
			t.Fatalf("ConfigMap %s: %v", name, err)
		}
		for k, v := range want {
			if cm.Data[k] != v {
				t.Errorf("ConfigMap %s data %v, want %s=%s", name, cm.Data, k, v)
			}
		}
	}

	patchSpec(t, g, map[string]any{
		"items":   forEachItems(4),
		"regions": map[string]any{"a": "za", "b": "zb", "c": "zc", "d": "zd"},
	})
	c := waitReady(t, g, metav1.ConditionFalse, ReasonReconcileFailed)
	for _, want := range []string{"onReconcile.configMaps[0]", "spec.items", "onReconcile.configMaps[1]", "spec.regions"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("Ready message %q does not name %q", c.Message, want)
		}
	}
	names, err := ownedConfigMapNames(ctx, ns, "g")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, ","); got != "g-a,g-b,g-c,g-e0,g-e1,g-e2" {
		t.Errorf("ConfigMaps %s, want the six written before and none of the expansions over the bound", got)
	}
}

// TestNewEngineForEachDefault: NewEngine fills in the forEach bound an EngineOptions
// leaves zero, and DefaultEngineOptions carries it.
func TestNewEngineForEachDefault(t *testing.T) {
	e, _ := startEngine(t, []*Katalog{mustParse(t, "bounds.yaml", forEachBoundKatalog)}, EngineOptions{}, env.Namespace(t))
	if e.opts.MaxForEachElements != DefaultMaxForEachElements {
		t.Errorf("NewEngine: MaxForEachElements %d, want %d", e.opts.MaxForEachElements, DefaultMaxForEachElements)
	}
	if def := DefaultEngineOptions(); def.MaxForEachElements != DefaultMaxForEachElements {
		t.Errorf("DefaultEngineOptions: MaxForEachElements %d, want %d", def.MaxForEachElements, DefaultMaxForEachElements)
	}
}

// TestForEachIndexNeverShadowsAlias: the element stays under its alias, and .index holds
// its position, even for an alias the loader refuses (a Katalog built in Go).
func TestForEachIndexNeverShadowsAlias(t *testing.T) {
	d := passData{"spec": map[string]any{"l": []any{"x", "y"}, "m": map[string]any{"k": "v"}}}
	reps, err := expand(&ForEach{Field: "spec.l", As: "index"}, d)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 2 || reps[0]["index"] != "x" || reps[1]["index"] != "y" {
		t.Errorf("as: index gave %v, want the elements x and y under index", reps)
	}
	reps, err = expand(&ForEach{Field: "spec.l"}, d)
	if err != nil {
		t.Fatal(err)
	}
	if reps[1]["item"] != "y" || reps[1]["index"] != 1 {
		t.Errorf("default alias: item %v index %v, want y 1", reps[1]["item"], reps[1]["index"])
	}
	for _, alias := range []string{"value", "index"} {
		reps, err = expand(&ForEach{Field: "spec.m", As: alias}, d)
		if err != nil {
			t.Fatal(err)
		}
		if reps[0][alias] != "k" {
			t.Errorf("map with as: %s gave %v, want the key k under %s", alias, reps[0], alias)
		}
	}
}

// TestForEachReservedAliasRefused: as: index (and every other key of the pass data) is
// refused at load time with an ErrInvalidValue naming the file, line and path.
func TestForEachReservedAliasRefused(t *testing.T) {
	for _, alias := range []string{"index", "value", "metadata", "spec", "status", "cross", "external", "children"} {
		t.Run(alias, func(t *testing.T) {
			_, err := Parse("alias.yaml", []byte(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: alias}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      operatorBox:
        onReconcile:
          configMaps:
            - name: "{{ .metadata.name }}"
              forEach: {field: spec.items, as: `+alias+`}
`))
			errs := LoadErrors(err)
			if len(errs) != 1 {
				t.Fatalf("Parse: %v, want one LoadError", err)
			}
			le := errs[0]
			if !errors.Is(le, ErrInvalidValue) || le.File != "alias.yaml" || le.Line != 12 ||
				le.Path != "spec.crds.gadget.operatorBox.onReconcile.configMaps[0].forEach.as" || !strings.Contains(le.Error(), `"`+alias+`"`) {
				t.Errorf("Parse: %v", le)
			}
		})
	}
}
