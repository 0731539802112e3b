package bench_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/discovery"
)

// serverWork is what kube-apiserver counts of its own work in its /metrics, summed over
// every label: the requests it served, the requests it sent to etcd, and the watch
// events it sent (and their bytes) to every watcher.
type serverWork struct {
	requests    float64
	etcd        float64
	watchEvents float64
	watchBytes  float64
}

// sub is the work between an earlier reading w0 and w.
func (w serverWork) sub(w0 serverWork) serverWork {
	return serverWork{
		requests:    w.requests - w0.requests,
		etcd:        w.etcd - w0.etcd,
		watchEvents: w.watchEvents - w0.watchEvents,
		watchBytes:  w.watchBytes - w0.watchBytes,
	}
}

// unknownWork is the serverWork of a run whose metrics could not be read.
var unknownWork = serverWork{requests: math.NaN(), etcd: math.NaN(), watchEvents: math.NaN(), watchBytes: math.NaN()}

// The kube-apiserver metrics serverWork sums.
const (
	metricRequests    = "apiserver_request_total"
	metricEtcd        = "etcd_requests_total"
	metricWatchEvents = "apiserver_watch_events_total"
	metricWatchBytes  = "apiserver_watch_events_sizes"
)

// readServerWork reads kube-apiserver's /metrics as the admin user.
func readServerWork(ctx context.Context) (serverWork, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		return unknownWork, err
	}
	body, err := dc.RESTClient().Get().AbsPath("/metrics").Stream(ctx)
	if err != nil {
		return unknownWork, fmt.Errorf("read kube-apiserver metrics: %w", err)
	}
	defer func() { _ = body.Close() }()
	return parseServerWork(body)
}

// parseServerWork sums serverWork's metrics in a Prometheus text exposition; a metric
// missing from it counts zero.
func parseServerWork(r io.Reader) (serverWork, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return unknownWork, fmt.Errorf("parse kube-apiserver metrics: %w", err)
	}
	sum := func(name string) float64 {
		total := 0.0
		if f, ok := families[name]; ok {
			for _, m := range f.GetMetric() {
				switch {
				case m.GetCounter() != nil:
					total += m.GetCounter().GetValue()
				case m.GetHistogram() != nil:
					total += m.GetHistogram().GetSampleSum()
				}
			}
		}
		return total
	}
	return serverWork{
		requests:    sum(metricRequests),
		etcd:        sum(metricEtcd),
		watchEvents: sum(metricWatchEvents),
		watchBytes:  sum(metricWatchBytes),
	}, nil
}

func TestParseServerWork(t *testing.T) {
	text := `# HELP apiserver_request_total Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",resource="configmaps",verb="POST"} 500
apiserver_request_total{code="200",resource="leases",verb="PUT"} 3
# HELP etcd_requests_total Etcd request counts.
# TYPE etcd_requests_total counter
etcd_requests_total{operation="create",type="/registry/configmaps"} 500
etcd_requests_total{operation="get",type="/registry/leases"} 2
# HELP apiserver_watch_events_total Number of events sent in watch clients
# TYPE apiserver_watch_events_total counter
apiserver_watch_events_total{group="",resource="configmaps",version="v1"} 1000
# HELP apiserver_watch_events_sizes Watch event size distribution in bytes
# TYPE apiserver_watch_events_sizes histogram
apiserver_watch_events_sizes_bucket{group="",resource="configmaps",version="v1",le="1024"} 1000
apiserver_watch_events_sizes_bucket{group="",resource="configmaps",version="v1",le="+Inf"} 1000
apiserver_watch_events_sizes_sum{group="",resource="configmaps",version="v1"} 640000
apiserver_watch_events_sizes_count{group="",resource="configmaps",version="v1"} 1000
# HELP go_goroutines Number of goroutines.
# TYPE go_goroutines gauge
go_goroutines 300
`
	got, err := parseServerWork(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := serverWork{requests: 503, etcd: 502, watchEvents: 1000, watchBytes: 640000}
	if got != want {
		t.Errorf("parseServerWork = %+v, want %+v", got, want)
	}
	if got := want.sub(serverWork{requests: 3, etcd: 2, watchEvents: 0, watchBytes: 40000}); got != (serverWork{requests: 500, etcd: 500, watchEvents: 1000, watchBytes: 600000}) {
		t.Errorf("sub = %+v", got)
	}
	if _, err := parseServerWork(strings.NewReader("apiserver_request_total{ 5\n")); err == nil {
		t.Error("a malformed exposition parsed")
	}
}

// TestServerWorkCountsWrites: the API server's own counters see a write of the admin
// client (a live check that /metrics is read and summed, not a fixed answer).
func TestServerWorkCountsWrites(t *testing.T) {
	ctx := context.Background()
	w0, err := readServerWork(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := createOwners(ctx, env.Namespace(t), 3); err != nil {
		t.Fatal(err)
	}
	w1, err := readServerWork(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := w1.sub(w0)
	if d.requests < 3 || d.etcd < 3 {
		t.Errorf("three creates counted as %+v, want at least 3 requests and 3 etcd requests", d)
	}
}
