package reconcile

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metric label names.
const (
	// LabelSubReconciler carries the step name on both metrics.
	LabelSubReconciler = "sub_reconciler"
	// LabelConditionType carries the step's condition type on the errors metric.
	LabelConditionType = "condition_type"
)

// Metric name suffixes, appended to the prefix with an underscore.
const (
	// DurationMetricSuffix names the step-duration histogram.
	DurationMetricSuffix = "reconcile_duration_seconds"
	// ErrorsMetricSuffix names the step-error counter.
	ErrorsMetricSuffix = "reconcile_errors_total"
)

var metricPrefixRE = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// MetricsOptions configure [NewMetrics].
type MetricsOptions struct {
	// Prefix starts both metric names, e.g. "memo_operator" gives
	// memo_operator_reconcile_duration_seconds and memo_operator_reconcile_errors_total.
	Prefix string
	// Registerer receives the collectors; controller-runtime's metrics.Registry (served
	// by the manager's metrics endpoint) by default.
	Registerer prometheus.Registerer
	// Buckets of the duration histogram, in seconds.
	Buckets []float64
}

// DefaultMetricsOptions returns options for prefix on controller-runtime's
// metrics.Registry with prometheus.DefBuckets (5 ms to 10 s).
func DefaultMetricsOptions(prefix string) MetricsOptions {
	return MetricsOptions{Prefix: prefix, Registerer: ctrlmetrics.Registry, Buckets: prometheus.DefBuckets}
}

// Metrics are the per-step collectors a [Pipeline] records into:
// <prefix>_reconcile_duration_seconds{sub_reconciler} and
// <prefix>_reconcile_errors_total{sub_reconciler,condition_type}. One Metrics value may
// serve several pipelines of the same operator.
type Metrics struct {
	duration *prometheus.HistogramVec
	errors   *prometheus.CounterVec
}

// NewMetrics creates the two collectors and registers them. Registering the same prefix
// twice (a second controller, a test that builds its reconciler again) is not an error:
// the collectors registered first are reused, so both values record into the same
// series. A collector of another shape already registered under one of the names is an
// error.
func NewMetrics(opts MetricsOptions) (*Metrics, error) {
	if !metricPrefixRE.MatchString(opts.Prefix) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidMetricsPrefix, opts.Prefix)
	}
	reg := opts.Registerer
	if reg == nil {
		reg = ctrlmetrics.Registry
	}
	buckets := opts.Buckets
	if len(buckets) == 0 {
		buckets = prometheus.DefBuckets
	}
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    opts.Prefix + "_" + DurationMetricSuffix,
		Help:    "Duration of each named step (sub-reconciler) of a reconcile pass, in seconds.",
		Buckets: buckets,
	}, []string{LabelSubReconciler})
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: opts.Prefix + "_" + ErrorsMetricSuffix,
		Help: "Number of errors (including recovered panics) returned by each named step of a reconcile pass.",
	}, []string{LabelSubReconciler, LabelConditionType})

	d, err := register(reg, duration)
	if err != nil {
		return nil, err
	}
	e, err := register(reg, errs)
	if err != nil {
		return nil, err
	}
	return &Metrics{duration: d, errors: e}, nil
}

// register registers c, or returns the collector of the same type registered before
// under the same descriptor.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
		err = fmt.Errorf("collector of type %T registered in its place", are.ExistingCollector)
	}
	var zero C
	return zero, fmt.Errorf("register step metrics: %w", err)
}
