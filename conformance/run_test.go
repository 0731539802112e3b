package conformance_test

import (
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/reconciler-sdk/conformance"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// RunOptions.OperatorOptions carries the suite's namespace and logger, turns the
// servers off and skips controller name validation; RunOptions.Metrics registers on the
// suite's Registerer.
func TestRunOptionsForAnOperator(t *testing.T) {
	reg := prometheus.NewRegistry()
	scheme := runtime.NewScheme()
	run := conformance.RunOptions{Namespace: "ns-1", Logger: logr.Discard(), Registerer: reg}
	o := run.OperatorOptions("my-operator", scheme)
	if o.FieldManager != "my-operator" || o.Namespace != "ns-1" || o.MetricsBindAddress != "0" ||
		o.HealthProbeBindAddress != "0" || o.Manager.Scheme != scheme || o.Manager.Logger.GetSink() != run.Logger.GetSink() {
		t.Errorf("OperatorOptions = %+v, want the field manager, namespace, scheme and logger given, servers off", o)
	}
	if skip := o.Manager.Controller.SkipNameValidation; skip == nil || !*skip {
		t.Error("controller name validation is not skipped: two instances of one process would collide")
	}
	if _, err := run.Metrics("my_operator"); err != nil {
		t.Fatal(err)
	}
	again := prometheus.NewCounter(prometheus.CounterOpts{Name: "my_operator_" + reconcile.ErrorsMetricSuffix, Help: "x"})
	if err := reg.Register(again); err == nil {
		t.Error("Metrics did not register the step metrics on the suite's Registerer")
	}
}
