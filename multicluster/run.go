package multicluster

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/httpauth"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// Defaults of [OperatorOptions], as [DefaultOperatorOptions] sets them.
const (
	// DefaultMetricsBindAddress is where the metrics endpoint listens: ":8080".
	DefaultMetricsBindAddress = ":8080"
	// DefaultHealthProbeBindAddress is where /healthz and /readyz listen: ":8081".
	DefaultHealthProbeBindAddress = ":8081"
)

// OperatorOptions configure [RunOperator]: what the main function of every operator on
// this package sets the same way. Start from [DefaultOperatorOptions] (leader election
// on, metrics over HTTPS behind authentication and authorization), set FieldManager,
// LeaderElectionID and Manager.Scheme, and bind the command-line flags with
// [OperatorOptions.BindFlags]. A zero OperatorOptions has leader election off.
type OperatorOptions struct {
	// FieldManager is the operator's field-manager name: the manager's cache keeps only
	// the Secrets and ConfigMaps labelled with it ([CacheOptions]), so does each target
	// cluster's ([ManagerOptions].FieldManager), and the resolver's Appliers write under
	// it unless Resolver.Applier.FieldManager names another. Required.
	FieldManager string
	// LeaderElectionID names the Lease the replicas elect a leader with. Required when
	// LeaderElect is set.
	LeaderElectionID string
	// LeaderElectionNamespace is the namespace of that Lease
	// (--leader-election-namespace); empty means the namespace the pod runs in, which
	// a process outside a cluster does not have: a local run gives one or turns leader
	// election off (--leader-elect=false).
	LeaderElectionNamespace string
	// MetricsBindAddress is the address the metrics endpoint (/metrics) listens on
	// (--metrics-bind-address); "0" serves none, an empty value means
	// DefaultMetricsBindAddress.
	MetricsBindAddress string
	// InsecureMetrics serves /metrics as plain HTTP to anyone who reaches the address
	// (--metrics-secure=false). By default (false) /metrics is served over HTTPS and
	// only to a client whose bearer token the API server authenticates (TokenReview)
	// and whose user may get the path /metrics (a SubjectAccessReview of the
	// non-resource URL /metrics, verb get: the RBAC rule nonResourceURLs ["/metrics"],
	// verbs ["get"]); see package httpauth. The operator then needs create on
	// tokenreviews.authentication.k8s.io and subjectaccessreviews.authorization.k8s.io
	// (this package's ClusterRole grants both).
	InsecureMetrics bool
	// MetricsCertDir is the directory of the metrics server's certificate, tls.crt and
	// tls.key, reloaded when they change (--metrics-cert-path); empty means a
	// self-signed certificate. Only with secure metrics.
	MetricsCertDir string
	// HealthProbeBindAddress is the address /healthz and /readyz listen on
	// (--health-probe-bind-address); "0" serves none, an empty value means
	// DefaultHealthProbeBindAddress.
	HealthProbeBindAddress string
	// LeaderElect elects a leader among the replicas, so that only one reconciles
	// (--leader-elect, on in DefaultOperatorOptions). The Lease LeaderElectionID in
	// LeaderElectionNamespace needs get, create and update on leases there.
	LeaderElect bool
	// Namespace restricts the manager's cache, and so every watch and cached read, to
	// one namespace (--namespace); empty means all namespaces.
	Namespace string
	// ClustersNamespace is the namespace of the kubeconfig Secrets that register target
	// clusters (--clusters-namespace, see [NewManager]); empty means none.
	ClustersNamespace string
	// Kubeconfig bounds what those kubeconfig Secrets may make the operator do (see
	// [KubeconfigOptions]): exec and auth-provider plugins, fields that read the pod's
	// files and weakened TLS are refused unless --insecure-kubeconfig-exec,
	// --insecure-kubeconfig-files or --insecure-kubeconfig-tls allow them.
	Kubeconfig KubeconfigOptions
	// Manager holds the remaining manager options: Scheme (required), Logger,
	// WebhookServer, Controller and the rest. RunOperator sets Metrics.BindAddress,
	// Metrics.SecureServing, Metrics.FilterProvider, Metrics.CertDir,
	// HealthProbeBindAddress, LeaderElection, LeaderElectionID,
	// LeaderElectionNamespace, Cache and Client.Cache from the fields above and
	// overwrites what is set there for them (Metrics.TLSOpts are kept, after one that
	// offers HTTP/1.1 only): the cache is
	// [CacheOptions] for FieldManager, ClustersNamespace and Namespace, and the kinds of
	// reconcile.UncachedObjects are read past it.
	Manager ctrl.Options
	// Resolver configures the resolver handed to the setup function (see
	// [NewResolver]); an empty Applier.FieldManager means FieldManager.
	Resolver ResolverOptions
}

// DefaultOperatorOptions returns the options of a cluster-wide operator without target
// clusters that elects a leader among its replicas (in the namespace it runs in),
// serves metrics over HTTPS behind authentication and authorization on
// DefaultMetricsBindAddress and the health probes on DefaultHealthProbeBindAddress;
// FieldManager, LeaderElectionID and Manager.Scheme are left to the caller.
func DefaultOperatorOptions() OperatorOptions {
	return OperatorOptions{
		MetricsBindAddress:     DefaultMetricsBindAddress,
		HealthProbeBindAddress: DefaultHealthProbeBindAddress,
		LeaderElect:            true,
	}
}

// BindFlags binds the command-line flags of o on fs, each defaulting to o's current
// value: --metrics-bind-address, --metrics-secure (the negation of InsecureMetrics),
// --metrics-cert-path, --health-probe-bind-address, --leader-elect,
// --leader-election-namespace, --namespace and --clusters-namespace. Call it before
// fs.Parse; change a flag's help with fs.Lookup(name).Usage.
//
// It also binds the flags of o.Kubeconfig ([KubeconfigOptions.BindFlags]):
// --insecure-kubeconfig-exec, --insecure-kubeconfig-files and --insecure-kubeconfig-tls.
func (o *OperatorOptions) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress,
		"address the metrics endpoint binds to; 0 turns it off")
	fs.Var(negatedBool{&o.InsecureMetrics}, "metrics-secure",
		"serve /metrics over HTTPS to authenticated and authorized clients only (TokenReview, SubjectAccessReview of get /metrics); false serves plain HTTP to anyone")
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-path", o.MetricsCertDir,
		"directory with the metrics server's tls.crt and tls.key (a self-signed certificate when empty)")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress,
		"address the health probes bind to; 0 turns them off")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect,
		"elect a leader, so that only one replica reconciles; false for a local run")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace,
		"namespace of the leader-election Lease (the pod's namespace when empty; required outside a cluster)")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace,
		"watch and cache only this namespace (all namespaces when empty)")
	fs.StringVar(&o.ClustersNamespace, "clusters-namespace", o.ClustersNamespace,
		"namespace of the kubeconfig Secrets that register target clusters (none when empty)")
	o.Kubeconfig.BindFlags(fs)
}

// negatedBool is a boolean flag that stores the negation of its value.
type negatedBool struct{ p *bool }

// String returns the flag's value: the negation of *p ("false" for the zero value,
// so that the flag's help shows a default of true).
func (b negatedBool) String() string {
	if b.p == nil {
		return "false"
	}
	return strconv.FormatBool(!*b.p)
}

// Set parses v as a boolean and stores its negation.
func (b negatedBool) Set(v string) error {
	on, err := strconv.ParseBool(v)
	if err != nil {
		return err
	}
	*b.p = !on
	return nil
}

// IsBoolFlag lets the flag be given without a value (--metrics-secure).
func (b negatedBool) IsBoolFlag() bool { return true }

// Validate reports the first option RunOperator cannot run with, wrapping
// [ErrInvalidOptions] and naming the flag (or, for options without one, the field).
func (o OperatorOptions) Validate() error {
	if o.FieldManager == "" {
		return fmt.Errorf("%w: OperatorOptions.FieldManager is empty", ErrInvalidOptions)
	}
	if o.Manager.Scheme == nil {
		return fmt.Errorf("%w: OperatorOptions.Manager.Scheme is nil", ErrInvalidOptions)
	}
	for _, a := range []struct{ flag, value string }{
		{"--metrics-bind-address", o.MetricsBindAddress},
		{"--health-probe-bind-address", o.HealthProbeBindAddress},
	} {
		if err := validateBindAddress(a.value); err != nil {
			return fmt.Errorf("%w: %s %q: %w", ErrInvalidOptions, a.flag, a.value, err)
		}
	}
	for _, ns := range []struct{ flag, value string }{
		{"--namespace", o.Namespace},
		{"--clusters-namespace", o.ClustersNamespace},
	} {
		if ns.value == "" {
			continue
		}
		if errs := validation.IsDNS1123Label(ns.value); len(errs) > 0 {
			return fmt.Errorf("%w: %s %q is not a namespace name: %s", ErrInvalidOptions, ns.flag, ns.value,
				strings.Join(errs, "; "))
		}
	}
	if o.LeaderElect && o.LeaderElectionID == "" {
		return fmt.Errorf("%w: --leader-elect needs OperatorOptions.LeaderElectionID, which is empty", ErrInvalidOptions)
	}
	if o.LeaderElectionNamespace != "" {
		if errs := validation.IsDNS1123Label(o.LeaderElectionNamespace); len(errs) > 0 {
			return fmt.Errorf("%w: --leader-election-namespace %q is not a namespace name: %s", ErrInvalidOptions,
				o.LeaderElectionNamespace, strings.Join(errs, "; "))
		}
	}
	if o.InsecureMetrics && o.MetricsCertDir != "" {
		return fmt.Errorf("%w: --metrics-cert-path %q needs --metrics-secure", ErrInvalidOptions, o.MetricsCertDir)
	}
	return nil
}

// validateBindAddress accepts "", "0" and host:port with a port from 0 to 65535.
func validateBindAddress(addr string) error {
	if addr == "" || addr == "0" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("want host:port or 0: %w", err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return nil
}

// ManagerOptions returns the manager options RunOperator builds the manager with:
// o.Manager with the metrics server (address; HTTPS behind httpauth.FilterProvider
// unless InsecureMetrics, with the certificate of MetricsCertDir), the probe address,
// leader election, the cache ([CacheOptions] scoped to Namespace) and the uncached
// kinds set from o.
func (o OperatorOptions) ManagerOptions() ctrl.Options {
	mgrOpts := o.Manager
	mgrOpts.Metrics.BindAddress = o.MetricsBindAddress
	if mgrOpts.Metrics.BindAddress == "" {
		mgrOpts.Metrics.BindAddress = DefaultMetricsBindAddress
	}
	mgrOpts.Metrics.SecureServing = !o.InsecureMetrics
	mgrOpts.Metrics.FilterProvider = nil
	mgrOpts.Metrics.CertDir = ""
	if mgrOpts.Metrics.SecureServing {
		mgrOpts.Metrics.FilterProvider = httpauth.FilterProvider
		mgrOpts.Metrics.CertDir = o.MetricsCertDir
		tlsOpts := []func(*tls.Config){http1Only}
		if o.MetricsCertDir == "" {
			// Without it controller-runtime would first look in a shared temporary
			// directory that any local user could fill.
			tlsOpts = append(tlsOpts, selfSigned)
		}
		mgrOpts.Metrics.TLSOpts = append(tlsOpts, o.Manager.Metrics.TLSOpts...)
	}
	mgrOpts.HealthProbeBindAddress = o.HealthProbeBindAddress
	if mgrOpts.HealthProbeBindAddress == "" {
		mgrOpts.HealthProbeBindAddress = DefaultHealthProbeBindAddress
	}
	mgrOpts.LeaderElection = o.LeaderElect
	mgrOpts.LeaderElectionID = o.LeaderElectionID
	mgrOpts.LeaderElectionNamespace = o.LeaderElectionNamespace
	var namespaces []string
	if o.Namespace != "" {
		namespaces = []string{o.Namespace}
	}
	// Secrets and ConfigMaps are cached only when the operator wrote them (or ESO synced
	// them with its label), so memory does not grow with the cluster.
	mgrOpts.Cache = CacheOptions(o.FieldManager, o.ClustersNamespace, namespaces...)
	mgrOpts.Client.Cache = &client.CacheOptions{DisableFor: reconcile.UncachedObjects()}
	return mgrOpts
}

// http1Only offers HTTP/1.1 only on the metrics server, as kubebuilder's scaffold does
// by default (HTTP/2 stream resets cost a server more than they cost the client).
func http1Only(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }

// selfSigned serves a self-signed certificate made when the metrics server starts.
// Should making one fail, GetCertificate stays unset and controller-runtime makes its
// own.
func selfSigned(c *tls.Config) {
	cfg, _, err := httpauth.TLSConfig("")
	if err != nil || len(cfg.Certificates) == 0 {
		return
	}
	pair := &cfg.Certificates[0]
	c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return pair, nil }
}

// OperatorSetup registers an operator's controllers (and webhooks) on mgr, before it
// starts; resolver is the [ClusterResolver] of mgr. An error stops [RunOperator] before
// the manager starts.
type OperatorSetup func(ctx context.Context, mgr mcmanager.Manager, resolver *ClusterResolver) error

// RunOperator runs an operator on the management cluster behind cfg until ctx ends
// (main passes ctrl.SetupSignalHandler()): it validates opts
// ([OperatorOptions.Validate]), builds the manager with [NewManager] (the kubeconfig
// provider of opts.ClustersNamespace, the cache of [OperatorOptions.ManagerOptions])
// and its resolver with [NewResolver], runs setup, adds the ping checks "healthz" and
// "readyz" and starts the manager. It returns nil when ctx ends and the manager stopped
// cleanly, and otherwise the first error, naming what failed.
func RunOperator(ctx context.Context, cfg *rest.Config, opts OperatorOptions, setup OperatorSetup) error {
	if setup == nil {
		return fmt.Errorf("%w: the setup function is nil", ErrInvalidOptions)
	}
	if err := opts.Validate(); err != nil {
		return err
	}
	mgr, err := NewManager(cfg, opts.ManagerOptions(),
		ManagerOptions{ClustersNamespace: opts.ClustersNamespace, FieldManager: opts.FieldManager, Kubeconfig: opts.Kubeconfig})
	if err != nil {
		if opts.LeaderElect && opts.LeaderElectionNamespace == "" {
			return fmt.Errorf("%w (outside a cluster give --leader-election-namespace, or --leader-elect=false for a local run)", err)
		}
		return err
	}
	resolverOpts := opts.Resolver
	if resolverOpts.Applier.FieldManager == "" {
		resolverOpts.Applier.FieldManager = opts.FieldManager
	}
	resolver, err := NewResolver(ctx, mgr, resolverOpts)
	if err != nil {
		return release(mgr, err)
	}
	if err := setup(ctx, mgr, resolver); err != nil {
		return release(mgr, fmt.Errorf("operator setup: %w", err))
	}
	local := mgr.GetLocalManager()
	if err := local.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return release(mgr, fmt.Errorf("health check healthz: %w", err))
	}
	if err := local.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return release(mgr, fmt.Errorf("readiness check readyz: %w", err))
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("operator manager: %w", err)
	}
	return nil
}

// release returns err after freeing what mgr holds before it starts: controller-runtime
// binds the health probe address when it builds a manager and closes it only when the
// manager stops, so mgr is started with a context that has already ended and stops at
// once. What that start reports is dropped: err is the reason RunOperator gives up.
func release(mgr mcmanager.Manager, err error) error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = mgr.Start(ctx)
	return err
}
