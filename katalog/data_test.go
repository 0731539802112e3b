package katalog

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestOwnedFields: only the leaf fields of the field manager's own Apply entry count, so
// the mutation apply never claims fields others set.
func TestOwnedFields(t *testing.T) {
	cr := &unstructured.Unstructured{Object: map[string]any{}}
	cr.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "katalog", Operation: "Apply", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{},"f:nested":{"f:x":{}}}}`)},
		{Manager: "kubectl", Operation: "Update", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:image":{}}}`)},
		{Manager: "katalog", Operation: "Update", Subresource: "status", FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:phase":{}}}`)},
	})
	got := ownedFields(cr, "katalog")
	want := map[string]bool{"spec.replicas": true, "spec.nested.x": true}
	if len(got) != len(want) || !got["spec.replicas"] || !got["spec.nested.x"] {
		t.Errorf("ownedFields = %v, want %v", got, want)
	}
}

func TestLookupAndGate(t *testing.T) {
	d := passData{"spec": map[string]any{"n": int64(3), "s": "on", "l": []any{"a"}}, "external": map[string]any{"x-y": map[string]any{"status": "200"}}}
	if v, ok := lookup(map[string]any(d), "external.x-y.status"); !ok || text(v) != "200" {
		t.Errorf("lookup external.x-y.status = %v, %v", v, ok)
	}
	if _, ok := lookup(map[string]any(d), "spec.missing"); ok {
		t.Error("a missing field is present")
	}
	if text(d["spec"].(map[string]any)["l"]) != `["a"]` {
		t.Error("a list is not compared as JSON")
	}
	cond := func(field, op, value string) Condition {
		return Condition{Field: MustTemplate(field), Operator: Operator(op), Value: MustTemplate(value)}
	}
	for _, tc := range []struct {
		when, anyOf []Condition
		want        bool
	}{
		{when: []Condition{cond("spec.n", "greaterThan", "2"), cond("spec.s", "equals", "on")}, want: true},
		{when: []Condition{cond("spec.n", "greaterThan", "2"), cond("spec.s", "equals", "off")}, want: false},
		{anyOf: []Condition{cond("spec.s", "equals", "off"), cond("{{ .spec.s }}", "equals", "on")}, want: true},
		{anyOf: []Condition{cond("spec.s", "equals", "off"), cond("spec.missing", "exists", "")}, want: false},
	} {
		got, err := gate(tc.when, tc.anyOf, d)
		if err != nil || got != tc.want {
			t.Errorf("gate(%v, %v) = %v, %v; want %v", tc.when, tc.anyOf, got, err, tc.want)
		}
	}
}
