package katalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// crossNSKatalog: Gadgets read a Database named by their spec, in a namespace named by
// their spec, without the Katalog's opt-in; RegionalApps read the same way with
// allowCrossNamespace. The database CRD does not operate the namespace restricted.
const crossNSKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: crossns}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      resync: 1h
      operatorBox:
        cross:
          - {crd: database, selector: {name: "{{ .spec.db }}", namespace: "{{ .spec.dbNamespace }}"}, as: db}
        onReconcile:
          configMaps:
            - {name: "{{ .metadata.name }}-copy", data: {secret: "{{ .cross.db.spec.secret }}"}}
        status:
          fields:
            - {path: copied, value: "{{ .cross.db.spec.secret }}"}
    regional:
      apiTypes: {group: platform.io, version: v1alpha1, kind: RegionalApp, plural: regionalapps}
      resync: 1h
      operatorBox:
        cross:
          - crd: database
            selector: {name: "{{ .spec.db }}", namespace: "{{ .spec.dbNamespace }}"}
            as: db
            allowCrossNamespace: true
        status:
          fields:
            - {path: copied, value: "{{ .cross.db.spec.secret }}"}
    database:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Database, plural: databases}
      resync: 1h
      restrictedNamespaces: [%s]
`

// statusCopied returns status.copied of the custom resource at obj's key ("" when unset).
func statusCopied(ctx context.Context, obj *unstructured.Unstructured) (string, error) {
	fresh := obj.DeepCopy()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
		return "", err
	}
	s, _, _ := unstructured.NestedString(fresh.Object, "status", "copied")
	return s, nil
}

// TestCrossStaysInNamespace: a CR author who names another namespace in a cross
// selector reads nothing from it unless the Katalog's cross entry sets
// allowCrossNamespace: Ready is False naming the entry and the field, and neither status
// nor a child holds the other namespace's data. With the opt-in the read is done, but
// only in namespaces the target CRD operates. The cross watch follows the same rule.
func TestCrossStaysInNamespace(t *testing.T) {
	teamA, teamB, restricted := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	k := mustParse(t, "crossns.yaml", fmt.Sprintf(crossNSKatalog, restricted))
	eng, _ := startEngine(t, []*Katalog{k}, testOptions(), teamA, teamB, restricted)

	shared := newObject("Database", teamB, "shared", map[string]any{"secret": "team-b-data"})
	own := newObject("Database", teamA, "own", map[string]any{"secret": "team-a-data"})
	hidden := newObject("Database", restricted, "hidden", map[string]any{"secret": "restricted-data"})
	for _, db := range []*unstructured.Unstructured{shared, own, hidden} {
		create(t, db)
	}
	thief := newObject("Gadget", teamA, "thief", map[string]any{"db": "shared", "dbNamespace": teamB})
	local := newObject("Gadget", teamA, "local", map[string]any{"db": "own", "dbNamespace": teamA})
	reader := newObject("RegionalApp", teamA, "reader", map[string]any{"db": "shared", "dbNamespace": teamB})
	blocked := newObject("RegionalApp", teamA, "blocked", map[string]any{"db": "hidden", "dbNamespace": restricted})
	for _, r := range []*unstructured.Unstructured{thief, local, reader, blocked} {
		create(t, r)
	}
	ctx := context.Background()

	// Without the opt-in: refused, naming the cross entry and the field; nothing read.
	c := waitReady(t, thief, metav1.ConditionFalse, ReasonReconcileFailed)
	for _, want := range []string{"cross db", "selector.namespace", teamB, "allowCrossNamespace"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("Ready message %q does not name %q", c.Message, want)
		}
	}
	if strings.Contains(c.Message, "team-b-data") {
		t.Errorf("Ready message %q holds the other namespace's data", c.Message)
	}
	if got, err := statusCopied(ctx, thief); err != nil || got != "" {
		t.Errorf("status.copied of the refused reader: %q, %v", got, err)
	}
	if err := getConfigMap(ctx, teamA, "thief-copy"); err == nil {
		t.Error("the refused reader's ConfigMap was written")
	}
	// Its own namespace, named explicitly: read.
	waitReady(t, local, metav1.ConditionTrue, ReasonReconciled)
	if got, err := statusCopied(ctx, local); err != nil || got != "team-a-data" {
		t.Errorf("status.copied of the reader of its own namespace: %q, %v", got, err)
	}

	// With the opt-in: read in a namespace the database CRD operates, refused elsewhere.
	waitReady(t, reader, metav1.ConditionTrue, ReasonReconciled)
	if got, err := statusCopied(ctx, reader); err != nil || got != "team-b-data" {
		t.Errorf("status.copied of the opted-in reader: %q, %v", got, err)
	}
	c = waitReady(t, blocked, metav1.ConditionFalse, ReasonReconcileFailed)
	for _, want := range []string{"cross db", "selector.namespace", restricted, "CRD database"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("Ready message %q does not name %q", c.Message, want)
		}
	}
	if got, err := statusCopied(ctx, blocked); err != nil || got != "" {
		t.Errorf("status.copied of the reader of a restricted namespace: %q, %v", got, err)
	}

	// The cross watch: a change in team-b reconciles the opted-in reader only; a change
	// in the restricted namespace reconciles nobody; one in team-a the local reader.
	for _, tc := range []struct {
		crd  string
		db   *unstructured.Unstructured
		want []string
	}{
		{"gadget", shared, nil},
		{"gadget", own, []string{teamA + "/local"}},
		{"regional", shared, []string{teamA + "/reader"}},
		{"regional", hidden, nil},
	} {
		var got []string
		for _, req := range eng.enqueueCrossReaders(eng.crds[tc.crd], "database")(ctx, tc.db) {
			got = append(got, req.String())
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s readers of Database %s/%s: %v, want %v", tc.crd, tc.db.GetNamespace(), tc.db.GetName(), got, tc.want)
		}
	}
}

// TestAllowCrossNamespaceChecked: allowCrossNamespace without selector.namespace, and a
// literal selector.namespace the target CRD does not operate, are refused at load time,
// naming the field.
func TestAllowCrossNamespaceChecked(t *testing.T) {
	for _, tc := range []struct {
		name, cross, path string
	}{
		{"opt-in without namespace", `{crd: database, selector: {name: x}, allowCrossNamespace: true}`,
			"spec.crds.gadget.operatorBox.cross[0].allowCrossNamespace"},
		{"restricted literal namespace", `{crd: database, selector: {name: x, namespace: kube-system}, allowCrossNamespace: true}`,
			"spec.crds.gadget.operatorBox.cross[0].selector.namespace"},
		{"literal namespace outside the allowed ones", `{crd: other, selector: {name: x, namespace: team-b}, allowCrossNamespace: true}`,
			"spec.crds.gadget.operatorBox.cross[0].selector.namespace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(`
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: x}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      operatorBox:
        cross:
          - `+tc.cross+`
    database:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Database, plural: databases}
      restrictedNamespaces: [kube-system]
    other:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Widget, plural: widgets}
      allowedNamespaces: [team-a]
`))
			errs := LoadErrors(err)
			if len(errs) != 1 || !errors.Is(errs[0], ErrInvalidValue) || errs[0].Path != tc.path {
				t.Fatalf("Parse: %v; want one ErrInvalidValue at %s", err, tc.path)
			}
		})
	}
	// The opt-in with a templated namespace, or a literal one the target operates, loads.
	for _, ns := range []string{`"{{ .spec.dbNamespace }}"`, "team-b"} {
		if _, err := Parse("ok.yaml", []byte(`
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: ok}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      operatorBox:
        cross:
          - {crd: database, selector: {name: x, namespace: `+ns+`}, allowCrossNamespace: true}
    database:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Database, plural: databases}
      restrictedNamespaces: [kube-system]
`)); err != nil {
			t.Errorf("namespace %s: %v", ns, err)
		}
	}
}
