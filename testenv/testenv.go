package testenv

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/testenv/assets"
)

// ErrNoAssets reports that neither $KUBEBUILDER_ASSETS nor the kit's cache directory
// holds kube-apiserver and etcd.
var ErrNoAssets = errors.New("envtest binaries (kube-apiserver, etcd) not found")

// Options configure [Start].
type Options struct {
	// Scheme the client uses, and [Env.Scheme]; nil means [NewScheme]. A scheme set
	// here replaces NewScheme's rather than extending it; to add your own API types to
	// the kit's, leave it nil and use AddToScheme.
	Scheme *runtime.Scheme
	// AddToScheme register the operator's own API types (its generated AddToScheme) in
	// Scheme, or in NewScheme's scheme when Scheme is nil. An error fails [Start] (and
	// [Main]) before anything runs, naming the function by its index.
	AddToScheme []func(*runtime.Scheme) error
	// Logger is what [Main] sets as controller-runtime's logger (ctrl.SetLogger) before
	// it starts anything; the zero value discards every line. controller-runtime keeps
	// the first logger set in a process, so one a TestMain set before Main stays. [Start]
	// does not use it.
	Logger logr.Logger
	// CRDSources are the upstream CRDs to install from the module cache; nil means
	// [DefaultCRDs]. Use an empty, non-nil slice to install none.
	CRDSources []CRDSource
	// CRDPaths are extra CRD manifests or directories to install (your own operator's
	// CRDs, e.g. "../config/crd/bases"). A missing path is an error.
	CRDPaths []string
	// AssetsDir overrides where kube-apiserver and etcd are taken from; empty means
	// $KUBEBUILDER_ASSETS, then [DefaultAssetsDir].
	AssetsDir string
	// WebhookPaths are admission webhook configuration manifests to install (files or
	// directories; controller-gen writes config/webhook/manifests.yaml). Their
	// clientConfig is pointed at a local serving address with a generated CA, and the
	// managers [Env.StartManager] and [Env.RunManager] start serve webhooks there, so a
	// test registers its handlers on mgr.GetWebhookServer() and the API server calls
	// them. A missing path is an error.
	WebhookPaths []string
	// Controllers runs real controllers next to the control plane once the CRDs are
	// installed: kube-controller-manager (garbage collector, Deployment, ReplicaSet,
	// Job and namespace controllers), kube-scheduler and kwok with one fake Node, so
	// that pods are scheduled and turn Running and Ready (Job pods: Succeeded). [Start]
	// returns only when garbage collection works. The binaries must sit in the
	// assets directory next to kube-apiserver; see the package documentation for
	// what the mode costs and what it cannot do.
	Controllers bool
	// FeatureGates are kube-apiserver feature gates to set, as "Name=true" or
	// "Name=false" (ShardedListAndWatch=true serves ListOptions.shardSelector); nil
	// leaves the binary's defaults.
	FeatureGates []string
}

// Env is a running control plane with a client for it.
type Env struct {
	// Config reaches the API server as cluster admin.
	Config *rest.Config
	// Client is an uncached client with Scheme.
	Client client.Client
	// Scheme knows the core types, the upstream CRD types and Options.Scheme's types.
	Scheme *runtime.Scheme

	env         *envtest.Environment
	controllers *processGroup
	// certDir holds kube-apiserver's serving certificates and client CA. The kit owns
	// it (envtest would remove a directory of its own on every API server stop), so
	// that [Env.RestartAPIServer] serves the same certificates; [Env.Stop] removes it.
	certDir  string
	stopOnce sync.Once
	stopErr  error

	// apiMu serializes [Env.StopAPIServer], [Env.RestartAPIServer] and [Env.Stop].
	apiMu sync.Mutex
	// apiDown is true between StopAPIServer and RestartAPIServer.
	apiDown bool
	// stopped is set once Stop has run.
	stopped atomic.Bool
}

// Bounds for starting and stopping kube-apiserver and etcd. They are generous on
// purpose: a slow start under load is not a test failure.
const (
	startTimeout = 2 * time.Minute
	stopTimeout  = time.Minute
)

// DefaultAssetsDir is the cache directory cmd/envtest (hack/envtest.sh) fills:
// ${XDG_CACHE_HOME:-$HOME/.cache}/reconciler-sdk/envtest/<KubernetesVersion>.
func DefaultAssetsDir() string {
	return filepath.Join(assets.DefaultCacheRoot(), KubernetesVersion)
}

// AssetsDir returns the absolute directory holding kube-apiserver and etcd, looking at
// override, then $KUBEBUILDER_ASSETS, then [DefaultAssetsDir]. It returns an error
// wrapping [ErrNoAssets] that says how to get the binaries when none has them.
func AssetsDir(override string) (string, error) {
	var tried []string
	for _, dir := range []string{override, os.Getenv("KUBEBUILDER_ASSETS"), DefaultAssetsDir()} {
		if dir == "" {
			continue
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", fmt.Errorf("testenv: assets directory %q: %w", dir, err)
		}
		if len(assets.Missing(abs, assets.CoreBinaries)) == 0 {
			return abs, nil
		}
		tried = append(tried, abs)
	}
	return "", fmt.Errorf("testenv: %w in %v: run `export KUBEBUILDER_ASSETS=$(go run github.com/c5c3/reconciler-sdk/cmd/envtest)` in your module (`make envtest` in the reconciler-sdk repository), or `setup-envtest use %s`",
		ErrNoAssets, tried, KubernetesVersion)
}

// Start brings up kube-apiserver and etcd, installs the CRDs, with
// [Options.Controllers] starts the controllers, and returns the running environment.
// Stop it with [Env.Stop]. On error nothing is left running.
func Start(opts Options) (*Env, error) {
	scheme, err := schemeOf(opts)
	if err != nil {
		return nil, err
	}
	assets, err := AssetsDir(opts.AssetsDir)
	if err != nil {
		return nil, err
	}
	var stages []string
	if opts.Controllers {
		if err := checkControllerBinaries(assets); err != nil {
			return nil, err
		}
		if stages, err = resolveModuleFiles("kwok Stage", []CRDSource{KWOKStages()}); err != nil {
			return nil, err
		}
	}
	sources := opts.CRDSources
	if sources == nil {
		sources = DefaultCRDs()
	}
	paths, err := ResolveCRDPaths(sources)
	if err != nil {
		return nil, err
	}
	paths = append(paths, opts.CRDPaths...)
	te := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDInstallOptions: envtest.CRDInstallOptions{
			Paths:              paths,
			ErrorIfPathMissing: true,
		},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{Paths: opts.WebhookPaths},
		// envtest's 20 s default is too tight for a 2-core CI machine that starts
		// several control planes at once (one per test package, go test -p).
		ControlPlaneStartTimeout: startTimeout,
		ControlPlaneStopTimeout:  stopTimeout,
	}
	// Explicit paths: envtest would otherwise prefer $KUBEBUILDER_ASSETS over
	// BinaryAssetsDirectory and ignore Options.AssetsDir.
	te.ControlPlane.GetAPIServer().Path = filepath.Join(assets, "kube-apiserver")
	te.ControlPlane.Etcd = &envtest.Etcd{Path: filepath.Join(assets, "etcd")}
	// A certificate directory of the kit's own: envtest removes one it created itself
	// whenever kube-apiserver stops and makes new certificates on the next start, which
	// would lock every existing client out after RestartAPIServer.
	certDir, err := os.MkdirTemp("", "testenv-apiserver-")
	if err != nil {
		return nil, fmt.Errorf("testenv: kube-apiserver certificate directory: %w", err)
	}
	te.ControlPlane.GetAPIServer().CertDir = certDir
	if len(opts.FeatureGates) > 0 {
		te.ControlPlane.GetAPIServer().Configure().Set("feature-gates", strings.Join(opts.FeatureGates, ","))
	}
	abort := func(err error) (*Env, error) {
		_ = te.Stop()
		_ = os.RemoveAll(certDir)
		return nil, err
	}
	cfg, err := te.Start()
	if err != nil {
		return abort(fmt.Errorf("testenv: start control plane from %s: %w", assets, err))
	}
	// Client-side throttling would only slow the tests down.
	cfg.QPS, cfg.Burst = 1000, 2000
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return abort(fmt.Errorf("testenv: client: %w", err))
	}
	e := &Env{Config: cfg, Client: c, Scheme: scheme, env: te, certDir: certDir}
	if opts.Controllers {
		if e.controllers, err = startControllers(te, c, assets, stages); err != nil {
			return abort(err)
		}
	}
	return e, nil
}

// schemeOf returns opts.Scheme (nil: a new [NewScheme]) with opts.AddToScheme's types.
func schemeOf(opts Options) (*runtime.Scheme, error) {
	scheme := opts.Scheme
	if scheme == nil {
		scheme = NewScheme()
	}
	for i, add := range opts.AddToScheme {
		if add == nil {
			return nil, fmt.Errorf("testenv: Options.AddToScheme[%d] is nil", i)
		}
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("testenv: Options.AddToScheme[%d]: %w", i, err)
		}
	}
	return scheme, nil
}

// Stop shuts the controllers (if any) and the control plane down and removes the API
// server's certificate directory. It is safe to call more than once, also while the
// API server is down after [Env.StopAPIServer], and concurrently with StopAPIServer
// and [Env.RestartAPIServer]; later calls return the first call's result.
func (e *Env) Stop() error {
	if e == nil || e.env == nil {
		return nil
	}
	e.stopOnce.Do(func() {
		e.apiMu.Lock()
		defer e.apiMu.Unlock()
		e.stopped.Store(true)
		errs := []error{e.controllers.stop(), e.env.Stop()}
		if e.certDir != "" {
			errs = append(errs, os.RemoveAll(e.certDir))
		}
		e.stopErr = errors.Join(errs...)
	})
	return e.stopErr
}

// Processes returns the processes that [Options.Controllers] started (their PIDs and
// log files, e.g. to read kube-controller-manager's log when a test fails), or nil
// when the environment runs without controllers.
func (e *Env) Processes() []Process {
	if e == nil || e.controllers == nil {
		return nil
	}
	out := make([]Process, len(e.controllers.procs))
	for i, p := range e.controllers.procs {
		out[i] = p.Process
	}
	return out
}

// Main sets controller-runtime's logger to [Options.Logger], starts an environment,
// stores it in *env, runs the package's tests and stops the environment; it returns the
// exit code for os.Exit. When the environment cannot start, it prints why and returns 1:
// tests never run, or skip, without their API server. In a `go test -fuzz` worker
// process it starts nothing and only runs the fuzz target.
func Main(m *testing.M, opts Options, env **Env) int {
	ctrllog.SetLogger(opts.Logger) // the zero Logger has no sink: every line is discarded
	if isFuzzWorker() {
		// A `go test -fuzz` worker process runs only the fuzz target; fuzz targets
		// must be pure. A control plane per worker would slow fuzzing down and could
		// outlive a worker the fuzzer kills.
		return m.Run()
	}
	e, err := Start(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		return 1
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: stop: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// isFuzzWorker reports whether this test binary runs as a fuzzing worker.
func isFuzzWorker() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}

// Namespace creates a namespace with a generated name for the test and deletes it
// when the test ends, without waiting for the deletion to finish. Plain envtest runs
// no namespace controller, so the objects inside are not removed (under
// [Options.Controllers] the namespace controller removes them in the background);
// tests stay isolated because each uses its own namespace.
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	if err := e.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("testenv: create namespace: %v", err)
	}
	t.Cleanup(func() {
		err := e.Client.Delete(context.Background(), ns)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("testenv: delete namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}
