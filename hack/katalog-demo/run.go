package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	katalogexamples "github.com/c5c3/reconciler-sdk/examples/katalog"
	"github.com/c5c3/reconciler-sdk/katalog"
	"github.com/c5c3/reconciler-sdk/katalog/inspect"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// namespace is where the samples are applied.
const namespace = "demo"

// errTimeout is wrapped by the error of a sample that did not turn Ready in time.
var errTimeout = errors.New("timed out")

// options configure run.
type options struct {
	// Out receives the demo's output.
	Out io.Writer
	// InspectorAddress is where the inspector listens (host:port; port 0 picks one).
	InspectorAddress string
	// ExitWhenReady returns once every sample is Ready instead of waiting for ctx.
	ExitWhenReady bool
	// Timeout bounds the wait for the samples.
	Timeout time.Duration
	// Poll is how often the samples are read.
	Poll time.Duration
	// LogDir receives the engine's log (katalog.log); empty means a new temporary
	// directory.
	LogDir string
}

// printf writes to Out; the demo has nowhere to report a failed write.
func (o options) printf(format string, args ...any) { _, _ = fmt.Fprintf(o.Out, format, args...) }

// println writes a line to Out.
func (o options) println(args ...any) { _, _ = fmt.Fprintln(o.Out, args...) }

// defaultOptions are the options of `make katalog-demo`, without Out.
func defaultOptions() options {
	return options{InspectorAddress: "127.0.0.1:8080", Timeout: 3 * time.Minute, Poll: 250 * time.Millisecond}
}

// run starts the control plane, runs the example Katalogs with the inspector, applies
// the samples and reports them until they are Ready (and, without ExitWhenReady, until
// ctx ends).
func run(ctx context.Context, o options) (err error) {
	dir, err := katalogexamples.Dir()
	if err != nil {
		return err
	}
	kats, err := katalogexamples.Load(dir)
	if err != nil {
		return err
	}
	samples, err := katalogexamples.Samples(dir)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.InspectorAddress)
	if err != nil {
		return fmt.Errorf("inspector address %s: %w", o.InspectorAddress, err)
	}
	defer func() { _ = ln.Close() }()
	logFile, logPath, err := openLog(o.LogDir)
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()

	o.println("Starting a local control plane (kube-apiserver, etcd, controllers, kwok) with the CRDs of examples/katalog/crds ...")
	env, err := testenv.Start(testenv.Options{
		Controllers: true,
		CRDSources:  []testenv.CRDSource{},
		CRDPaths:    []string{filepath.Join(dir, katalogexamples.CRDDir)},
	})
	if err != nil {
		return err
	}
	defer func() {
		if serr := env.Stop(); serr != nil && err == nil {
			err = fmt.Errorf("stopping the control plane: %w", serr)
		}
	}()

	registry := &http.Server{Handler: http.HandlerFunc(serveRegistry), ReadHeaderTimeout: 5 * time.Second}
	regLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("the registry stand-in: %w", err)
	}
	go func() { _ = registry.Serve(regLn) }()
	defer func() { _ = registry.Close() }()
	registryURL := "http://" + regLn.Addr().String()

	ctrl.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(logFile))))
	mgr, _, stopMgr, err := env.RunManager(ctrl.Options{Cache: katalog.CacheOptions(cache.Options{}, kats...)})
	if err != nil {
		return err
	}
	defer func() {
		if serr := stopMgr(); serr != nil && err == nil {
			err = fmt.Errorf("stopping the engine: %w", serr)
		}
	}()
	engineOpts := katalog.DefaultEngineOptions()
	engineOpts.DependencyRetry = time.Second
	// The stand-in plays the registry platform.yaml names; it listens on loopback, which
	// external calls may not reach unless allowed.
	engineOpts.HTTPClient, err = katalogexamples.StandInClient(registryURL, outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes})
	if err != nil {
		return err
	}
	e, err := katalog.NewEngine(mgr, kats, engineOpts)
	if err != nil {
		return err
	}
	h, err := inspect.New(inspect.Options{
		Reader: mgr.GetCache(), Events: mgr.GetAPIReader(), CRDs: katalog.StartOrder(kats...), Health: inspect.EngineHealth(e),
	})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/katalog/", h)
	mux.Handle("/controlcenter/", h)
	inspector := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = inspector.Serve(ln) }()
	defer func() { _ = inspector.Close() }()
	url := "http://" + ln.Addr().String() + "/controlcenter/"

	for _, k := range kats {
		o.printf("Running Katalog %s (%s): %s\n", k.Metadata.Name, filepath.Base(k.File), strings.Join(k.CRDNames(), ", "))
	}
	o.printf("Registry (played): %s stands in for %s and answers 200 for every image\n", registryURL, katalogexamples.RegistryHost)
	o.printf("Inspector: %s\n", url)

	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return fmt.Errorf("creating Namespace %s: %w", namespace, err)
	}
	for _, s := range samples {
		s.SetNamespace(namespace)
		if err := env.Client.Create(ctx, s); err != nil {
			return fmt.Errorf("applying %s %s/%s: %w", s.GetKind(), namespace, s.GetName(), err)
		}
		o.printf("Applied %s %s/%s\n", s.GetKind(), namespace, s.GetName())
	}

	if err := watch(ctx, env.Client, samples, o); err != nil {
		return err
	}
	o.printf("Inspect them at %s (the engine's log: %s)\n", url, logPath)
	o.printf("On a cluster: kubectl apply -f examples/katalog/crds/ && go run ./cmd/katalog --katalog %s\n",
		strings.Join([]string{"examples/katalog/platform.yaml", "examples/katalog/database.yaml", "examples/katalog/foreach.yaml"}, " --katalog "))
	if o.ExitWhenReady {
		return nil
	}
	o.println("Running until interrupted (Ctrl-C).")
	<-ctx.Done()
	return nil
}

// serveRegistry plays an image registry: every manifest exists.
func serveRegistry(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/v2/") && strings.HasSuffix(r.URL.Path, "/manifests/latest") {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.WriteHeader(http.StatusNotFound)
}

// openLog creates katalog.log in dir (a new temporary directory when empty).
func openLog(dir string) (*os.File, string, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "katalog-demo-")
		if err != nil {
			return nil, "", fmt.Errorf("creating the log directory: %w", err)
		}
		dir = d
	}
	p := filepath.Join(dir, "katalog.log")
	f, err := os.Create(p) //nolint:gosec // a file of the demo's own directory
	if err != nil {
		return nil, "", fmt.Errorf("creating the engine's log: %w", err)
	}
	return f, p, nil
}

// state is what the demo shows of one sample.
type state struct {
	kind, name string
	// ready is the Ready condition, nil when the sample has none yet.
	ready *metav1.Condition
	// phase is status.phase.
	phase string
}

// done reports whether the sample is Ready: Ready True and phase Ready.
func (s state) done() bool {
	return s.ready != nil && s.ready.Status == metav1.ConditionTrue && s.phase == "Ready"
}

// String describes the sample in one line.
func (s state) String() string {
	ready := "Ready -"
	if s.ready != nil {
		ready = fmt.Sprintf("Ready %s %s: %s", s.ready.Status, s.ready.Reason, s.ready.Message)
	}
	phase := s.phase
	if phase == "" {
		phase = "-"
	}
	return fmt.Sprintf("%-11s %-5s phase %-8s %s", s.kind, s.name, phase, ready)
}

// watch prints every change of the samples' states until all are done, ctx ends or
// o.Timeout passes (an error naming the first sample not done).
func watch(ctx context.Context, c client.Client, samples []*unstructured.Unstructured, o options) error {
	start := time.Now()
	deadline := start.Add(o.Timeout)
	last := map[string]string{}
	for {
		states := make([]state, 0, len(samples))
		for _, s := range samples {
			st, err := read(ctx, c, s)
			if err != nil {
				return err
			}
			states = append(states, st)
			if line := st.String(); last[s.GetKind()+"/"+s.GetName()] != line {
				last[s.GetKind()+"/"+s.GetName()] = line
				o.printf("%6.1fs  %s\n", time.Since(start).Seconds(), line)
			}
		}
		if firstPending(states) == nil {
			o.printf("✓ every sample is Ready after %.1f s\n", time.Since(start).Seconds())
			return nil
		}
		if time.Now().After(deadline) {
			return stuckError(states, o.Timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(o.Poll):
		}
	}
}

// firstPending returns the first state that is not done, nil when all are.
func firstPending(states []state) *state {
	for i := range states {
		if !states[i].done() {
			return &states[i]
		}
	}
	return nil
}

// stuckError names the first sample that is not Ready, with its condition and phase.
func stuckError(states []state, timeout time.Duration) error {
	s := firstPending(states)
	if s == nil {
		return fmt.Errorf("%w after %s, but every sample is Ready", errTimeout, timeout)
	}
	cond := "has no Ready condition"
	if s.ready != nil {
		cond = fmt.Sprintf("Ready is %s, reason %s: %s", s.ready.Status, s.ready.Reason, s.ready.Message)
	}
	phase := s.phase
	if phase == "" {
		phase = "(none)"
	}
	return fmt.Errorf("%w after %s: %s %s/%s %s; status.phase %s", errTimeout, timeout, s.kind, namespace, s.name, cond, phase)
}

// read returns the state of sample s.
func read(ctx context.Context, c client.Client, s *unstructured.Unstructured) (state, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(s.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(s), u); err != nil {
		return state{}, fmt.Errorf("reading %s %s/%s: %w", s.GetKind(), s.GetNamespace(), s.GetName(), err)
	}
	st := state{kind: s.GetKind(), name: s.GetName()}
	st.phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range conds {
		m, ok := raw.(map[string]any)
		if !ok || m["type"] != "Ready" {
			continue
		}
		status, _ := m["status"].(string)
		reason, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		st.ready = &metav1.Condition{Type: "Ready", Status: metav1.ConditionStatus(status), Reason: reason, Message: msg}
	}
	return st, nil
}
