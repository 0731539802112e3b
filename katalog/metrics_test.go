package katalog

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

const metricsKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: metrics}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      validation:
        rules:
          - {field: spec.image, operator: exists, action: deny}
      operatorBox:
        onReconcile:
          configMaps:
            - name: "{{ .metadata.name }}"
              data: {third: "{{ index .spec.items 2 }}"}
        status:
          fields:
            - {path: phase, value: Seen}
`

// stepCounts gathers, from reg, how often each step ran (the duration histogram's sample
// count per sub_reconciler) and failed (the errors counter per sub_reconciler), leaving
// out the steps that did neither.
func stepCounts(t *testing.T, reg *prometheus.Registry) (ran, failed map[string]uint64) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	ran, failed = map[string]uint64{}, map[string]uint64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var step string
			for _, l := range m.GetLabel() {
				if l.GetName() == reconcile.LabelSubReconciler {
					step = l.GetValue()
				}
			}
			switch f.GetName() { // series are created at zero when the pipelines are built
			case "katalog_test_" + reconcile.DurationMetricSuffix:
				if n := m.GetHistogram().GetSampleCount(); n > 0 {
					ran[step] = n
				}
			case "katalog_test_" + reconcile.ErrorsMetricSuffix:
				if n := uint64(m.GetCounter().GetValue()); n > 0 {
					failed[step] = n
				}
			}
		}
	}
	return ran, failed
}

// TestStepMetrics: every step of a pass records its duration under "<crd>/<step>"; a
// denied custom resource counts an error of the validation step and ends the pass there;
// a declaration that fails counts an error of its group, and the status step still runs
// (the status fields are written) without setting Ready.
func TestStepMetrics(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	reg := prometheus.NewRegistry()
	mopts := reconcile.DefaultMetricsOptions("katalog_test")
	mopts.Registerer = reg
	m, err := reconcile.NewMetrics(mopts)
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions()
	opts.Metrics = m
	e := passEngineWith(env.Client, mustParse(t, "metrics.yaml", metricsKatalog), opts)
	pass := func(obj *unstructured.Unstructured) *metav1.Condition {
		t.Helper()
		_, c, _ := passOnce(t, e, "gadget", obj)
		return c
	}
	steps := func(names ...string) map[string]uint64 {
		out := map[string]uint64{}
		for _, n := range names {
			out["gadget/"+n] = 1
		}
		return out
	}
	live := []string{"dependsOn", "validation", "mutation", "cross", "onCreate", "onReconcile", "prune", "status"}

	good := newObject("Gadget", ns, "good", map[string]any{"image": "nginx", "items": []any{"a", "b", "c"}})
	create(t, good)
	if c := pass(good); c == nil || c.Reason != ReasonReconciled {
		t.Fatalf("Ready of a valid custom resource = %+v, want reason %s", c, ReasonReconciled)
	}
	ran, failed := stepCounts(t, reg)
	if diff := cmp.Diff(steps(live...), ran); diff != "" {
		t.Errorf("steps of a converging pass (-want +got):\n%s", diff)
	}
	if len(failed) != 0 {
		t.Errorf("a converging pass counted errors: %v", failed)
	}

	denied := newObject("Gadget", ns, "denied", map[string]any{"items": []any{"a", "b", "c"}})
	create(t, denied)
	if c := pass(denied); c == nil || c.Reason != ReasonValidationFailed {
		t.Fatalf("Ready of a denied custom resource = %+v, want reason %s", c, ReasonValidationFailed)
	}
	ran, failed = stepCounts(t, reg)
	want := steps(live...)
	for _, s := range []string{"dependsOn", "validation"} {
		want["gadget/"+s] = 2
	}
	if diff := cmp.Diff(want, ran); diff != "" {
		t.Errorf("steps after a denied pass (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]uint64{"gadget/validation": 1}, failed); diff != "" {
		t.Errorf("errors after a denied pass (-want +got):\n%s", diff)
	}

	short := newObject("Gadget", ns, "short", map[string]any{"image": "nginx", "items": []any{"a"}})
	create(t, short)
	c := pass(short)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonReconcileFailed || !strings.Contains(c.Message, "gadget/onReconcile") {
		t.Fatalf("Ready of a custom resource whose ConfigMap cannot render = %+v, want False/%s naming gadget/onReconcile", c, ReasonReconcileFailed)
	}
	ran, failed = stepCounts(t, reg)
	for _, s := range []string{"dependsOn", "validation", "mutation", "cross", "onCreate", "onReconcile", "status"} {
		want["gadget/"+s]++
	}
	if diff := cmp.Diff(want, ran); diff != "" {
		t.Errorf("steps after a failed onReconcile (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]uint64{"gadget/validation": 1, "gadget/onReconcile": 1}, failed); diff != "" {
		t.Errorf("errors after a failed onReconcile (-want +got):\n%s", diff)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(short), short); err != nil {
		t.Fatal(err)
	}
	if phase, _, _ := unstructured.NestedString(short.Object, "status", "phase"); phase != "Seen" {
		t.Errorf("status.phase after a failed onReconcile = %q, want the status field written (Seen)", phase)
	}
}
