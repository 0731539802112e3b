package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/reconciler-sdk/katalog"
	"github.com/c5c3/reconciler-sdk/katalog/inspect"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// Defaults of the command's own flags.
const (
	// defaultInspectorBindAddress is where the inspector listens.
	defaultInspectorBindAddress = ":8080"
	// defaultMetricsBindAddress moves /metrics off the inspector's port.
	defaultMetricsBindAddress = ":8082"
	// defaultLeaderElectionID names the Lease of --leader-elect.
	defaultLeaderElectionID = "katalog.orkestra.orkspace.io"
)

// Errors of the command line.
var (
	// errNoKatalog: no --katalog was given.
	errNoKatalog = errors.New("no Katalog: give at least one --katalog file")
	// errClustersNamespace: target clusters are not supported.
	errClustersNamespace = errors.New("the Katalog engine has no target clusters: every child is written next to its custom resource")
)

// options are the command's settings: those of every operator on
// multicluster.RunOperator, the Katalog files and the inspector's address.
type options struct {
	multicluster.OperatorOptions
	// katalogs are the Katalog files, in the order given.
	katalogs []string
	// inspectorBindAddress is where the inspector listens; "0" serves none.
	inspectorBindAddress string
	// engine configures the engine; FieldManager is OperatorOptions.FieldManager.
	engine katalog.EngineOptions
	// inspectorListening, when set, is told the inspector's address once it listens.
	inspectorListening func(addr string)
}

// defaultOptions are the settings without any flag: every namespace, the field manager
// "katalog", the inspector on :8080.
func defaultOptions() options {
	o := options{
		OperatorOptions:      multicluster.DefaultOperatorOptions(),
		inspectorBindAddress: defaultInspectorBindAddress,
		engine:               katalog.DefaultEngineOptions(),
	}
	o.FieldManager = o.engine.FieldManager
	o.LeaderElectionID = defaultLeaderElectionID
	o.MetricsBindAddress = defaultMetricsBindAddress
	return o
}

// katalogList is the repeatable --katalog flag; each value may be a comma list.
type katalogList struct{ paths *[]string }

// String returns the paths joined with commas.
func (l katalogList) String() string {
	if l.paths == nil {
		return ""
	}
	return strings.Join(*l.paths, ",")
}

// Set adds the paths of one --katalog, split at commas, skipping empty ones.
func (l katalogList) Set(v string) error {
	for p := range strings.SplitSeq(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l.paths = append(*l.paths, p)
		}
	}
	return nil
}

// bind binds the flags of o on fs.
func (o *options) bind(fs *flag.FlagSet) {
	o.BindFlags(fs)
	fs.Lookup("namespace").Usage = "watch and reconcile the custom resources of this namespace only (all namespaces when empty)"
	fs.Lookup("clusters-namespace").Usage = "not supported: the Katalog engine writes every child next to its custom resource"
	fs.Var(katalogList{&o.katalogs}, "katalog", "a Katalog file to run; repeat the flag or give a comma-separated list (required)")
	o.bindOutbound(fs)
	fs.StringVar(&o.inspectorBindAddress, "inspector-bind-address", o.inspectorBindAddress,
		"address the inspector (/katalog/, /controlcenter/) binds to; 0 turns it off")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID, "name of the Lease --leader-elect takes")
	fs.IntVar(&o.engine.MaxForEachElements, "max-foreach-elements", o.engine.MaxForEachElements,
		"most elements one forEach expands to per custom resource; a list or map with more writes none of them")
	fs.DurationVar(&o.engine.OnDeleteGiveUpAfter, "ondelete-give-up-after", o.engine.OnDeleteGiveUpAfter,
		"how long onDelete keeps trying after a custom resource's deletion started before its finalizer is removed anyway")
}

// parseFlags parses args on fs, bound to the defaults, and checks that a Katalog is given.
func parseFlags(fs *flag.FlagSet, args []string) (options, error) {
	o := defaultOptions()
	o.bind(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q: give Katalog files with --katalog", fs.Args())
	}
	if len(o.katalogs) == 0 {
		return o, errNoKatalog
	}
	return o, nil
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == rbacCommand {
		if err := printRBAC(os.Stdout, os.Args[2:]); err != nil {
			printError(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	logConfig := textlogger.NewConfig()
	logConfig.AddFlags(flag.CommandLine) // -v, -vmodule
	o, err := parseFlags(flag.CommandLine, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "katalog:", err)
		flag.Usage()
		os.Exit(2)
	}
	ctrl.SetLogger(textlogger.NewLogger(logConfig))
	// Load before reaching for a cluster, so that a Katalog's problems are reported
	// without one.
	if _, err := load(o.katalogs); err != nil {
		printError(os.Stderr, err)
		os.Exit(1)
	}
	if err := run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), o); err != nil {
		printError(os.Stderr, err)
		os.Exit(1)
	}
}

// rbacCommand prints the ClusterRole the Katalogs need (printRBAC).
const rbacCommand = "rbac"

// printRBAC is `katalog rbac --katalog FILE... [--name NAME]`: it loads the Katalogs
// and writes to w, as YAML, the ClusterRole an engine running them needs
// (katalog.ClusterRole), named NAME ("katalog" by default).
func printRBAC(w io.Writer, args []string) error {
	fs := flag.NewFlagSet(rbacCommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var paths []string
	fs.Var(katalogList{paths: &paths}, "katalog", "a Katalog file; repeat it or give a comma list (required)")
	name := fs.String("name", "katalog", "the ClusterRole's name")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%s: %w", rbacCommand, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", rbacCommand, fs.Arg(0))
	}
	if *name == "" {
		return fmt.Errorf("%s: --name is empty", rbacCommand)
	}
	kats, err := load(paths)
	if err != nil {
		return err
	}
	out, err := yaml.Marshal(katalog.ClusterRole(*name, kats...))
	if err != nil {
		return fmt.Errorf("%s: %w", rbacCommand, err)
	}
	_, err = w.Write(out)
	return err
}

// printError writes err to w, one line per problem, indented below the first.
func printError(w io.Writer, err error) {
	lines := strings.Split(err.Error(), "\n")
	_, _ = fmt.Fprintln(w, "katalog:", lines[0])
	for _, l := range lines[1:] {
		_, _ = fmt.Fprintln(w, "  "+l)
	}
}

// load loads the Katalog files together; the error lists every problem of every file,
// each naming the file and line.
func load(paths []string) ([]*katalog.Katalog, error) {
	if len(paths) == 0 {
		return nil, errNoKatalog
	}
	kats, err := katalog.LoadAll(paths...)
	if err != nil {
		return nil, fmt.Errorf("cannot load the Katalogs:\n%w", err)
	}
	return kats, nil
}

// run loads the Katalogs of o and runs them on the cluster behind cfg until ctx ends.
func run(ctx context.Context, cfg *rest.Config, o options) error {
	if o.ClustersNamespace != "" {
		return fmt.Errorf("--clusters-namespace %q: %w", o.ClustersNamespace, errClustersNamespace)
	}
	if err := validateAddress(o.inspectorBindAddress); err != nil {
		return fmt.Errorf("--inspector-bind-address %q: %w", o.inspectorBindAddress, err)
	}
	kats, err := load(o.katalogs)
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	opts := o.OperatorOptions
	opts.Manager.Scheme = scheme
	// RunOperator sets the cache options (the Secrets and ConfigMaps of the field
	// manager, --namespace); the Katalogs add the CRDs that allow one namespace only.
	opts.Manager.NewCache = func(cfg *rest.Config, co cache.Options) (cache.Cache, error) {
		return cache.New(cfg, katalog.CacheOptions(co, kats...))
	}
	engineOpts := o.engine
	engineOpts.FieldManager = opts.FieldManager
	if engineOpts.Metrics == nil {
		m, err := reconcile.NewMetrics(reconcile.DefaultMetricsOptions(katalog.MetricsPrefix))
		if err != nil {
			return err
		}
		engineOpts.Metrics = m
	}
	return multicluster.RunOperator(ctx, cfg, opts, func(_ context.Context, mc mcmanager.Manager, _ *multicluster.ClusterResolver) error {
		mgr := mc.GetLocalManager()
		e, err := katalog.NewEngine(mgr, kats, engineOpts)
		if err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("katalog", func(*http.Request) error { return synced(e) }); err != nil {
			return fmt.Errorf("readiness check katalog: %w", err)
		}
		if o.inspectorBindAddress == "0" {
			return nil
		}
		h, err := inspect.New(inspect.Options{
			Reader: mgr.GetCache(),
			Events: mgr.GetAPIReader(),
			CRDs:   katalog.StartOrder(kats...),
			Health: inspect.EngineHealth(e),
		})
		if err != nil {
			return err
		}
		srv, err := newInspectorServer(o.inspectorBindAddress, h)
		if err != nil {
			return err
		}
		if o.inspectorListening != nil {
			o.inspectorListening(srv.addr())
		}
		if err := mgr.Add(srv); err != nil {
			_ = srv.listener.Close()
			return fmt.Errorf("adding the inspector: %w", err)
		}
		return nil
	})
}

// synced reports the first CRD entry whose informer has not synced, nil when all have.
func synced(e *katalog.Engine) error {
	for _, crd := range e.CRDs() {
		if !e.Synced(crd) {
			return fmt.Errorf("the informer of CRD %s has not synced", crd)
		}
	}
	return nil
}

// validateAddress accepts "0" and host:port.
func validateAddress(addr string) error {
	if addr == "0" {
		return nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("want host:port or 0: %w", err)
	}
	return nil
}

// inspectorServer serves the inspector as a manager Runnable: it starts and stops with
// the manager, on every replica (it needs no leader election).
type inspectorServer struct {
	listener net.Listener
	server   *http.Server
}

var (
	_ manager.Runnable               = (*inspectorServer)(nil)
	_ manager.LeaderElectionRunnable = (*inspectorServer)(nil)
)

// newInspectorServer binds addr at once, so that a taken port fails the start, and
// serves h under /katalog/ and /controlcenter/; / redirects to /controlcenter/.
func newInspectorServer(addr string, h http.Handler) (*inspectorServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--inspector-bind-address %q: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/katalog/", h)
	mux.Handle("/controlcenter/", h)
	mux.Handle("/{$}", http.RedirectHandler("/controlcenter/", http.StatusFound))
	return &inspectorServer{
		listener: ln,
		server:   &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
	}, nil
}

// addr returns the address the inspector listens on.
func (s *inspectorServer) addr() string { return s.listener.Addr().String() }

// Start serves until ctx ends, then shuts the server down.
func (s *inspectorServer) Start(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.server.Serve(s.listener) }()
	select {
	case err := <-done:
		return fmt.Errorf("inspector on %s: %w", s.addr(), err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := s.server.Shutdown(shutdown); err != nil {
		return fmt.Errorf("stopping the inspector on %s: %w", s.addr(), err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("inspector on %s: %w", s.addr(), err)
	}
	return nil
}

// NeedLeaderElection is false: every replica serves the inspector.
func (s *inspectorServer) NeedLeaderElection() bool { return false }
