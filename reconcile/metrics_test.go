package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

var ignoreLTT = cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")

// newTestMetrics registers metrics under prefix on a registry of the test's own.
func newTestMetrics(t testing.TB, prefix string) *reconcile.Metrics {
	t.Helper()
	opts := reconcile.DefaultMetricsOptions(prefix)
	opts.Registerer = prometheus.NewRegistry()
	m, err := reconcile.NewMetrics(opts)
	if err != nil {
		t.Fatalf("NewMetrics: %v", err)
	}
	return m
}

// histogramCounts returns the observation count of each sub_reconciler series of the
// histogram name in reg.
func histogramCounts(t *testing.T, reg prometheus.Gatherer, name string) map[string]uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	counts := map[string]uint64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == reconcile.LabelSubReconciler {
					counts[l.GetValue()] = m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return counts
}

func TestMetricsRecordEveryExitPath(t *testing.T) {
	reg := prometheus.NewRegistry()
	opts := reconcile.DefaultMetricsOptions("dashboard_operator")
	opts.Registerer = reg
	m, err := reconcile.NewMetrics(opts)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	p := mustPipeline(t, m,
		reconcile.Step[*Widget]{Name: "Secrets", Condition: "SecretsReady", Run: func(context.Context, *Widget) (ctrl.Result, error) {
			return ctrl.Result{}, nil
		}},
		reconcile.Step[*Widget]{Name: "Config", Condition: "ConfigReady", Run: func(context.Context, *Widget) (ctrl.Result, error) {
			calls++
			switch calls {
			case 1:
				return ctrl.Result{}, errBoom
			case 2:
				panic("config panicked")
			default:
				return after(10), nil
			}
		}},
		reconcile.Step[*Widget]{Run: func(context.Context, *Widget) (ctrl.Result, error) { return ctrl.Result{}, errBoom }},
		reconcile.Parallel("",
			reconcile.Step[*Widget]{Name: "HPA", Condition: "HPAReady", Run: func(context.Context, *Widget) (ctrl.Result, error) { return ctrl.Result{}, errBoom }},
			reconcile.Step[*Widget]{Name: "VPA", Condition: "VPAReady", Run: func(context.Context, *Widget) (ctrl.Result, error) { return ctrl.Result{}, nil }},
		),
	)
	for range 3 {
		_, _ = p.Run(context.Background(), newWidget(1))
	}
	// Pass 1 ends in Config's error, pass 2 in its panic, pass 3 in its requeue: the
	// unnamed prune step and the group never run.
	wantCounts := map[string]uint64{"Secrets": 3, "Config": 3, "HPA": 0, "VPA": 0}
	if got := histogramCounts(t, reg, "dashboard_operator_reconcile_duration_seconds"); !cmp.Equal(got, wantCounts) {
		t.Errorf("duration observations = %v, want %v", got, wantCounts)
	}
	want := `
# HELP dashboard_operator_reconcile_errors_total Number of errors (including recovered panics) returned by each named step of a reconcile pass.
# TYPE dashboard_operator_reconcile_errors_total counter
dashboard_operator_reconcile_errors_total{condition_type="ConfigReady",sub_reconciler="Config"} 2
dashboard_operator_reconcile_errors_total{condition_type="HPAReady",sub_reconciler="HPA"} 0
dashboard_operator_reconcile_errors_total{condition_type="SecretsReady",sub_reconciler="Secrets"} 0
dashboard_operator_reconcile_errors_total{condition_type="VPAReady",sub_reconciler="VPA"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "dashboard_operator_reconcile_errors_total"); err != nil {
		t.Error(err)
	}

	// Let the group run: its failing member is counted, the unnamed step is not.
	p2 := mustPipeline(t, m, reconcile.Step[*Widget]{Run: func(context.Context, *Widget) (ctrl.Result, error) { return ctrl.Result{}, nil }},
		reconcile.Parallel("",
			reconcile.Step[*Widget]{Name: "HPA2", Condition: "HPAReady", Run: func(context.Context, *Widget) (ctrl.Result, error) { return ctrl.Result{}, errBoom }},
		))
	if _, err := p2.Run(context.Background(), newWidget(1)); !errors.Is(err, errBoom) {
		t.Fatalf("Run = %v", err)
	}
	if got := counterValue(t, reg, "dashboard_operator_reconcile_errors_total", "HPA2"); got != 1 {
		t.Errorf("HPA2 errors = %v, want 1", got)
	}
	if got := histogramCounts(t, reg, "dashboard_operator_reconcile_duration_seconds")["HPA2"]; got != 1 {
		t.Errorf("HPA2 observations = %d, want 1", got)
	}
}

// counterValue returns the value of the errors_total series name{sub_reconciler=step}.
func counterValue(t *testing.T, reg prometheus.Gatherer, name, step string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == reconcile.LabelSubReconciler && l.GetValue() == step {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s series for %s", name, step)
	return 0
}

func TestMetricsLabelsStayBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	opts := reconcile.DefaultMetricsOptions("bounded")
	opts.Registerer = reg
	m, err := reconcile.NewMetrics(opts)
	if err != nil {
		t.Fatal(err)
	}
	p := mustPipeline(t, m,
		reconcile.Step[*Widget]{Name: "A", Condition: "AReady", Run: func(context.Context, *Widget) (ctrl.Result, error) { return ctrl.Result{}, errBoom }},
		reconcile.Step[*Widget]{Name: "B", Condition: "BReady", Run: func(context.Context, *Widget) (ctrl.Result, error) { return ctrl.Result{}, nil }},
	)
	for i := range 200 {
		w := newWidget(int64(i))
		w.Name = fmt.Sprintf("widget-%d", i)
		_, _ = p.Run(context.Background(), w)
	}
	// One series per named step, whatever objects were reconciled.
	for _, name := range []string{"bounded_reconcile_duration_seconds", "bounded_reconcile_errors_total"} {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n != 2 {
			t.Errorf("%s series = %d (%v), want 2", name, n, err)
		}
	}
}

// twiceRuns numbers the runs of TestNewMetricsOnControllerRuntimeRegistryTwice.
var twiceRuns atomic.Int32

func TestNewMetricsOnControllerRuntimeRegistryTwice(t *testing.T) {
	// The default options register on controller-runtime's registry; a second
	// registration under the same prefix reuses the first collectors.
	// A prefix of its own per run: the global registry outlives a run (go test -count).
	prefix := fmt.Sprintf("twice_operator_%d", twiceRuns.Add(1))
	m1, err := reconcile.NewMetrics(reconcile.DefaultMetricsOptions(prefix))
	if err != nil {
		t.Fatal(err)
	}
	m2, err := reconcile.NewMetrics(reconcile.DefaultMetricsOptions(prefix))
	if err != nil {
		t.Fatalf("second registration: %v", err)
	}
	fail := func(context.Context, *Widget) (ctrl.Result, error) { return ctrl.Result{}, errBoom }
	for _, m := range []*reconcile.Metrics{m1, m2} {
		p := mustPipeline(t, m, reconcile.Step[*Widget]{Name: "Config", Condition: "ConfigReady", Run: fail})
		_, _ = p.Run(context.Background(), newWidget(1))
	}
	want := strings.ReplaceAll(`
# HELP PREFIX_reconcile_errors_total Number of errors (including recovered panics) returned by each named step of a reconcile pass.
# TYPE PREFIX_reconcile_errors_total counter
PREFIX_reconcile_errors_total{condition_type="ConfigReady",sub_reconciler="Config"} 2
`, "PREFIX", prefix)
	if err := testutil.GatherAndCompare(ctrlmetrics.Registry, strings.NewReader(want), prefix+"_reconcile_errors_total"); err != nil {
		t.Error(err)
	}
	if got := histogramCounts(t, ctrlmetrics.Registry, prefix+"_reconcile_duration_seconds")["Config"]; got != 2 {
		t.Errorf("observations = %d, want 2 (both registrations record into one series)", got)
	}
}

func TestNewMetricsRefuses(t *testing.T) {
	for name, prefix := range map[string]string{"empty": "", "dash": "dashboard-operator", "leading digit": "1op", "space": "a b"} {
		t.Run(name, func(t *testing.T) {
			if _, err := reconcile.NewMetrics(reconcile.DefaultMetricsOptions(prefix)); !errors.Is(err, reconcile.ErrInvalidMetricsPrefix) {
				t.Errorf("NewMetrics(%q) error = %v, want ErrInvalidMetricsPrefix", prefix, err)
			}
		})
	}
	t.Run("another collector under the name", func(t *testing.T) {
		reg := prometheus.NewRegistry()
		reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "clash_reconcile_duration_seconds", Help: "x"}))
		opts := reconcile.DefaultMetricsOptions("clash")
		opts.Registerer = reg
		if _, err := reconcile.NewMetrics(opts); err == nil {
			t.Fatal("NewMetrics succeeded over a counter registered under the histogram's name")
		}
	})
}
