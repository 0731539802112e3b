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

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/reconciler-sdk/katalog"
	"github.com/c5c3/reconciler-sdk/katalog/inspect"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// Defaults of the command's own flags.
const (
	// defaultInspectorBindAddress is where the inspector listens: the loopback
	// interface only.
	defaultInspectorBindAddress = inspect.DefaultBindAddress
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
	// inspectorCertDir holds the inspector's tls.crt and tls.key, for an address
	// beyond the loopback interface; empty means a self-signed certificate.
	inspectorCertDir string
	// engine configures the engine; FieldManager is OperatorOptions.FieldManager.
	engine katalog.EngineOptions
	// inspectorListening, when set, is told the inspector's base URL once it listens.
	inspectorListening func(url string)
}

// defaultOptions are the settings without any flag: every namespace, the field manager
// "katalog", the inspector on 127.0.0.1:8080, leader election on, /metrics over HTTPS
// on :8082 behind authentication and authorization.
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
		"address the inspector (/katalog/, /controlcenter/) binds to; 0 turns it off. Beyond the loopback interface it serves HTTPS to authenticated and authorized clients only")
	fs.StringVar(&o.inspectorCertDir, "inspector-cert-dir", o.inspectorCertDir,
		"directory with the inspector's tls.crt and tls.key, when it binds beyond the loopback interface (a self-signed certificate when empty)")
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

// rbacCommand prints the ClusterRole and the Role the Katalogs need (printRBAC).
const rbacCommand = "rbac"

// printRBAC is `katalog rbac --katalog FILE... [--name NAME] [--namespace NS]`: it
// loads the Katalogs and writes to w, as two YAML documents, the ClusterRole an engine
// running them needs (katalog.ClusterRole) and the Role of its leader-election Lease
// (katalog.LeaseRole), both named NAME ("katalog" by default), the Role in namespace
// NS (none by default: kubectl apply -n NS places it).
func printRBAC(w io.Writer, args []string) error {
	fs := flag.NewFlagSet(rbacCommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var paths []string
	fs.Var(katalogList{paths: &paths}, "katalog", "a Katalog file; repeat it or give a comma list (required)")
	name := fs.String("name", "katalog", "the ClusterRole's and the Role's name")
	namespace := fs.String("namespace", "", "the Role's namespace: where the engine runs and takes its Lease (none: kubectl apply -n places it)")
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
	clusterRole, err := yaml.Marshal(katalog.ClusterRole(*name, kats...))
	if err != nil {
		return fmt.Errorf("%s: %w", rbacCommand, err)
	}
	role, err := yaml.Marshal(katalog.LeaseRole(*name, *namespace))
	if err != nil {
		return fmt.Errorf("%s: %w", rbacCommand, err)
	}
	_, err = fmt.Fprintf(w, "%s---\n%s", clusterRole, role)
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
	// The inspector reads the custom resources' events from the cache too.
	opts.Manager.NewCache = func(cfg *rest.Config, co cache.Options) (cache.Cache, error) {
		return cache.New(cfg, inspect.CacheOptions(katalog.CacheOptions(co, kats...)))
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
	return multicluster.RunOperator(ctx, cfg, opts, func(ctx context.Context, mc mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
		mgr := mc.GetLocalManager()
		engineOpts.Shard = resolver.Shard() // --sharded
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
		if err := inspect.IndexEvents(ctx, mgr.GetFieldIndexer()); err != nil {
			return err
		}
		h, err := inspect.New(inspect.Options{
			Reader: mgr.GetCache(), // the events too, through the index of IndexEvents
			CRDs:   katalog.StartOrder(kats...),
			Health: inspect.EngineHealth(e),
		})
		if err != nil {
			return err
		}
		srv, err := inspect.NewServer(h, inspect.ServerOptions{
			BindAddress: o.inspectorBindAddress,
			Config:      mgr.GetConfig(),
			HTTPClient:  mgr.GetHTTPClient(),
			CertDir:     o.inspectorCertDir,
			Logger:      mgr.GetLogger().WithName("inspector"),
		})
		if err != nil {
			return fmt.Errorf("--inspector-bind-address %q: %w", o.inspectorBindAddress, err)
		}
		if o.inspectorListening != nil {
			o.inspectorListening(srv.URL())
		}
		if err := mgr.Add(srv); err != nil {
			_ = srv.Close()
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
