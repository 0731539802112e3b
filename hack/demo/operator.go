package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// logTo sends controller-runtime's and klog's logs (the operator's and client-go's) to
// the file path instead of the terminal; the returned function closes the file.
func logTo(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating the operator log: %w", err)
	}
	var mu sync.Mutex
	logger := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		// A line the file does not take is lost; the demo's own output does not need it.
		_, _ = fmt.Fprintf(f, "%s %s %s\n", time.Now().Format(time.RFC3339Nano), prefix, args)
	}, funcr.Options{LogTimestamp: false, Verbosity: 0})
	ctrllog.SetLogger(logger)
	klog.SetLogger(logger)
	return func() { _ = f.Close() }, nil
}

// startOperator runs the Horizon operator in-process on env, wired as the example's
// main would wire it (see startManager), with probeURL as the health check's target.
// It returns once the manager's cache has synced; stop ends the manager and waits for
// it.
func startOperator(ctx context.Context, env *testenv.Env, probeURL func(*v1alpha1.Horizon) string) (stop func() error, err error) {
	return startManager(ctx, env, controller.FieldManager, func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
		opts := controller.DefaultOptions()
		opts.ProbeURL = probeURL
		opts.Outbound = outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes} // the stand-in login page listens on loopback
		opts.Recorder = mgr.GetLocalManager().GetEventRecorder(controller.FieldManager)
		r, err := controller.NewReconciler(resolver, opts)
		if err != nil {
			return err
		}
		return r.SetupWithManager(ctx, mgr)
	})
}

// startManager runs an operator in-process on env, wired as the examples' mains wire
// it: a multicluster manager with the operator's cache (Secrets and ConfigMaps only
// when the operator labelled them; Secrets, Pods and ControllerRevisions read past the
// cache), a resolver whose Appliers write under fieldManager, and the controllers
// setup registers. It returns once the manager's cache has synced; stop ends the
// manager and waits for it.
func startManager(ctx context.Context, env *testenv.Env, fieldManager string,
	setup func(context.Context, mcmanager.Manager, *multicluster.ClusterResolver) error) (stop func() error, err error) {
	mgr, err := multicluster.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  multicluster.CacheOptions(fieldManager, ""),
		Client:                 client.Options{Cache: &client.CacheOptions{DisableFor: reconcile.UncachedObjects()}},
	}, multicluster.ManagerOptions{FieldManager: fieldManager})
	if err != nil {
		return nil, err
	}
	mctx, cancel := context.WithCancel(ctx)
	resolver, err := multicluster.NewResolver(mctx, mgr, multicluster.ResolverOptions{
		Applier: apply.ApplierOptions{FieldManager: fieldManager},
	})
	if err != nil {
		cancel()
		return nil, err
	}
	if err := setup(mctx, mgr, resolver); err != nil {
		cancel()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	stop = func() error {
		cancel()
		return <-done
	}
	syncCtx, syncCancel := context.WithTimeout(mctx, 2*time.Minute)
	defer syncCancel()
	if !mgr.GetLocalManager().GetCache().WaitForCacheSync(syncCtx) {
		return nil, errors.Join(errors.New("the operator's cache did not sync"), stop())
	}
	return stop, nil
}

// loginPage is what the dashboard serves at controller.LoginPath: an HTML page with
// the login form, which is what the health check accepts (controller.LoginPageValid).
const loginPage = `<!DOCTYPE html>
<html><head><title>Login - OpenStack Dashboard</title></head>
<body><form method="POST" action="` + controller.LoginPath + `">
<input name="username"><input name="password" type="password"><button>Sign In</button>
</form></body></html>
`

// newLoginServer starts the stand-in for the dashboard's pods: no container runs on the
// demo's fake node, so the health check asks this server for the login page instead.
func newLoginServer() *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc(controller.LoginPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, loginPage)
	})
	return httptest.NewServer(mux)
}

// probeURLFor points the health check at srv once the Horizon publishes its endpoint
// (before that, the check reports EndpointNotReady, as it would in a cluster).
func probeURLFor(srv *httptest.Server) func(*v1alpha1.Horizon) string {
	return func(h *v1alpha1.Horizon) string {
		if h.Status.Endpoint == "" {
			return ""
		}
		return srv.URL + controller.LoginPath
	}
}

// logDir makes the directory of the operator's log: dir itself when set, else a new
// temporary directory.
func logDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	d, err := os.MkdirTemp("", "reconciler-sdk-demo-")
	if err != nil {
		return "", fmt.Errorf("creating the log directory: %w", err)
	}
	return d, nil
}

// operatorLogPath is the operator's log file in dir.
func operatorLogPath(dir string) string { return filepath.Join(dir, "operator.log") }
