package conformance

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/job"
)

// The suite recognises the write-once children the SDK marks — a Job of job.RunJob by
// its re-run key annotation, an immutable ConfigMap or Secret — and those
// Options.WriteOnce declares; every other child is restored.
func TestWriteOnceReason(t *testing.T) {
	obj := func(apiVersion, kind, name string, annotations map[string]any, immutable bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"name": name, "namespace": "ns"}}}
		if annotations != nil {
			_ = unstructured.SetNestedMap(u.Object, annotations, "metadata", "annotations")
		}
		if immutable {
			u.Object["immutable"] = true
		}
		return u
	}
	declared := func(o client.Object) bool { return o.GetName() == "generated" }
	for _, tc := range []struct {
		name     string
		obj      *unstructured.Unstructured
		declared func(client.Object) bool
		want     string
	}{
		{"Job of RunJob", obj("batch/v1", "Job", "db-sync", map[string]any{job.PodSpecHashAnnotation: "abc"}, false), nil, writeOnceJob},
		{"Job without a re-run key", obj("batch/v1", "Job", "other", nil, false), nil, ""},
		{"Job of another group", obj("example.com/v1", "Job", "db-sync", map[string]any{job.PodSpecHashAnnotation: "abc"}, false), nil, ""},
		{"immutable ConfigMap", obj("v1", "ConfigMap", "config-abc", nil, true), nil, writeOnceImmutable},
		{"immutable Secret", obj("v1", "Secret", "tls-abc", nil, true), nil, writeOnceImmutable},
		{"mutable ConfigMap", obj("v1", "ConfigMap", "config", nil, false), nil, ""},
		{"declared Secret", obj("v1", "Secret", "generated", nil, false), declared, writeOnceDeclared},
		{"undeclared Secret", obj("v1", "Secret", "connection", nil, false), declared, ""},
		{"nil WriteOnce", obj("v1", "Secret", "generated", nil, false), nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := writeOnceReason(tc.obj, tc.declared); got != tc.want {
				t.Errorf("writeOnceReason = %q, want %q", got, tc.want)
			}
		})
	}
}
