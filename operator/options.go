package operator

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/httpauth"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/shard"
)

// Defaults of [Options], as [DefaultOptions] sets them.
const (
	// DefaultMetricsBindAddress is where /metrics listens: ":8080".
	DefaultMetricsBindAddress = ":8080"
	// DefaultHealthProbeBindAddress is where /healthz and /readyz listen: ":8081".
	DefaultHealthProbeBindAddress = ":8081"
	// DefaultWebhookPort is the port of the admission webhook server: 9443.
	DefaultWebhookPort = 9443
)

// ErrInvalidOptions reports options [Run] cannot run with; the error names the flag,
// or the field where there is none.
var ErrInvalidOptions = errors.New("invalid operator options")

// Options configure [Run]. Start from [DefaultOptions], set FieldManager,
// LeaderElectionID and Manager.Scheme, then bind the flags ([Options.BindFlags]). The
// flags, their defaults and what each opens are listed in the package documentation.
type Options struct {
	// FieldManager is the operator's field-manager name: its Applier writes under it
	// and the cache keeps only the Secrets and ConfigMaps labelled with it. Required.
	FieldManager string
	// LeaderElectionID names the leader-election Lease. Required with LeaderElect.
	LeaderElectionID string
	// LeaderElectionNamespace is the Lease's namespace (--leader-election-namespace);
	// empty means the pod's own, which a process outside a cluster does not have.
	LeaderElectionNamespace string
	// MetricsBindAddress is the address of /metrics (--metrics-bind-address); "0"
	// serves none, empty means DefaultMetricsBindAddress.
	MetricsBindAddress string
	// InsecureMetrics serves /metrics as plain HTTP to anyone (--metrics-secure=false);
	// false serves HTTPS behind httpauth (TokenReview, SubjectAccessReview of get /metrics).
	InsecureMetrics bool
	// MetricsCertDir holds tls.crt and tls.key of the metrics server, reloaded on change
	// (--metrics-cert-path); empty means a self-signed certificate. Secure metrics only.
	MetricsCertDir string
	// HealthProbeBindAddress is the address of /healthz and /readyz
	// (--health-probe-bind-address); "0" serves none, empty means DefaultHealthProbeBindAddress.
	HealthProbeBindAddress string
	// LeaderElect lets only the replica holding the Lease reconcile (--leader-elect).
	LeaderElect bool
	// Namespace restricts the cache, so every watch and cached read, to one namespace
	// (--namespace); empty means all namespaces.
	Namespace string
	// WebhookCertDir holds tls.crt and tls.key of the admission webhook server, reloaded
	// on change (--webhook-cert-path); empty serves no webhook unless Manager.WebhookServer
	// is set.
	WebhookCertDir string
	// WebhookPort is the webhook server's port (--webhook-port); 0 means DefaultWebhookPort.
	WebhookPort int
	// SetupWebhooks registers the operator's admission webhooks on the manager; [Run]
	// calls it after the setup when the manager serves webhooks ([Options.ServesWebhooks]).
	SetupWebhooks func(ctrl.Manager) error
	// Sharded (--sharded) runs every replica of the Deployment active: each is a member
	// of a ring (package shard) named after FieldManager, whose Leases live in
	// LeaderElectionNamespace (in a cluster: the pod's namespace), and reconciles only
	// the custom resources of its ranges ([JoinRing]). Leader election is then off. The
	// setup gates its reconcilers with shard.Gate(Operator.Shard, ...); [Run] refuses to
	// start when it gated none.
	Sharded bool
	// ShardSelectors (--shard-selectors) makes a Sharded replica's informers hold only
	// its slice: those of the children kinds (shard.Member.SelectOwned) by the bucket
	// label the Applier stamps (shard.OwnerLabels), on every API server, and those of the
	// custom resources (shard.Member.Select) by the API server's shardSelector where the
	// server serves it (Kubernetes 1.36+, feature gate ShardedListAndWatch); elsewhere,
	// and without it, the informers hold every object and the others' are filtered. Leave
	// it off when a controller reads custom resources of a sharded kind other than its
	// own (a satellite's parent, a cross reference), or children of another replica's
	// custom resources: those reads then miss the other replicas' objects.
	ShardSelectors bool
	// Shard tunes the ring of Sharded: empty Namespace and Ring take the values above,
	// an empty Identity the host name (the pod's name), zero durations shard's defaults.
	Shard shard.Options
	// AddToScheme are the operator's own AddToScheme functions, added by [Options.Scheme]
	// to Manager.Scheme, or to a [NewScheme] when Manager.Scheme is nil.
	AddToScheme []func(*runtime.Scheme) error
	// Manager holds the remaining manager options (Scheme, unless AddToScheme is set;
	// Logger, WebhookServer, Controller, ...). What [Options.ManagerOptions] sets from
	// the fields above overwrites what is set here, except a WebhookServer, which is kept;
	// Metrics.TLSOpts are kept.
	Manager ctrl.Options
}

// DefaultOptions returns the options of a cluster-wide operator that is safe to deploy:
// leader election on, /metrics over HTTPS behind authentication and authorization on
// DefaultMetricsBindAddress, the probes on DefaultHealthProbeBindAddress, no webhook
// server (its port DefaultWebhookPort once --webhook-cert-path is given).
func DefaultOptions() Options {
	return Options{
		MetricsBindAddress:     DefaultMetricsBindAddress,
		HealthProbeBindAddress: DefaultHealthProbeBindAddress,
		LeaderElect:            true,
		WebhookPort:            DefaultWebhookPort,
	}
}

// BindFlags binds the flags of the package documentation on fs, each defaulting to o's
// current value. Call it before fs.Parse; change a help text with fs.Lookup(name).Usage.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress,
		"`address` the metrics endpoint binds to; 0 turns it off")
	fs.Var(negatedBool{&o.InsecureMetrics}, "metrics-secure",
		"serve /metrics over HTTPS to authenticated and authorized clients only (TokenReview, SubjectAccessReview of get /metrics); false serves plain HTTP to anyone")
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-path", o.MetricsCertDir,
		"`directory` with the metrics server's tls.crt and tls.key (a self-signed certificate when empty)")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress,
		"`address` the health probes bind to; 0 turns them off")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect,
		"elect a leader, so that only one replica reconciles; false for a local run")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace,
		"`namespace` of the leader-election Lease (the pod's namespace when empty; required outside a cluster)")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace,
		"watch and cache only this `namespace` (all namespaces when empty)")
	fs.StringVar(&o.WebhookCertDir, "webhook-cert-path", o.WebhookCertDir,
		"`directory` with the admission webhook server's tls.crt and tls.key; empty serves no webhook")
	fs.IntVar(&o.WebhookPort, "webhook-port", o.WebhookPort, "`port` the admission webhook server listens on")
	fs.BoolVar(&o.Sharded, "sharded", o.Sharded,
		"run every replica active, each reconciling the custom resources of its shard of the UID hash space (Leases in the leader election namespace); turns leader election off")
	fs.BoolVar(&o.ShardSelectors, "shard-selectors", o.ShardSelectors,
		"with --sharded, have each replica's informers hold only its objects: the children by their bucket label (any API server), the custom resources by shardSelector where served (Kubernetes 1.36+ with ShardedListAndWatch); not for operators whose controllers read other custom resources of a sharded kind, or children of another custom resource")
}

// negatedBool is a boolean flag that stores the negation of its value.
type negatedBool struct{ p *bool }

// String returns the negation of *p ("false" for the zero value, so that the help
// shows a default of true).
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

// Validate reports the first option [Run] cannot run with, wrapping [ErrInvalidOptions]
// and naming the flag (or the field without one).
func (o Options) Validate() error {
	if o.FieldManager == "" {
		return fmt.Errorf("%w: Options.FieldManager is empty", ErrInvalidOptions)
	}
	if o.Manager.Scheme == nil && len(o.AddToScheme) == 0 {
		return fmt.Errorf("%w: Options.Manager.Scheme is nil and Options.AddToScheme is empty", ErrInvalidOptions)
	}
	for _, a := range []struct{ flag, value string }{
		{"--metrics-bind-address", o.MetricsBindAddress},
		{"--health-probe-bind-address", o.HealthProbeBindAddress},
	} {
		if err := validateBindAddress(a.value); err != nil {
			return fmt.Errorf("%w: %s %q: %w", ErrInvalidOptions, a.flag, a.value, err)
		}
	}
	if err := validateNamespace("--namespace", o.Namespace); err != nil {
		return err
	}
	if o.LeaderElect && !o.Sharded && o.LeaderElectionID == "" {
		return fmt.Errorf("%w: --leader-elect needs Options.LeaderElectionID, which is empty", ErrInvalidOptions)
	}
	if err := validateNamespace("--leader-election-namespace", o.LeaderElectionNamespace); err != nil {
		return err
	}
	if o.InsecureMetrics && o.MetricsCertDir != "" {
		return fmt.Errorf("%w: --metrics-cert-path %q needs --metrics-secure", ErrInvalidOptions, o.MetricsCertDir)
	}
	if o.WebhookPort < 0 || o.WebhookPort > 65535 {
		return fmt.Errorf("%w: --webhook-port %d is not a port from 1 to 65535", ErrInvalidOptions, o.WebhookPort)
	}
	return nil
}

// Scheme returns the manager's scheme as [Run] builds it: Manager.Scheme with
// AddToScheme added, or, when Manager.Scheme is nil, [NewScheme] of AddToScheme. The
// error names the function that failed.
func (o Options) Scheme() (*runtime.Scheme, error) {
	if o.Manager.Scheme == nil {
		return NewScheme(o.AddToScheme...)
	}
	for i, add := range o.AddToScheme {
		if err := add(o.Manager.Scheme); err != nil {
			return nil, fmt.Errorf("scheme: Options.AddToScheme[%d]: %w", i, err)
		}
	}
	return o.Manager.Scheme, nil
}

// ServesWebhooks reports whether the manager serves admission webhooks: WebhookCertDir
// is set, or Manager.WebhookServer is.
func (o Options) ServesWebhooks() bool {
	return o.WebhookCertDir != "" || o.Manager.WebhookServer != nil
}

// validateNamespace refuses a value of flag that is not a namespace name; an empty
// value passes.
func validateNamespace(flag, value string) error {
	if value == "" {
		return nil
	}
	if errs := validation.IsDNS1123Label(value); len(errs) > 0 {
		return fmt.Errorf("%w: %s %q is not a namespace name: %s", ErrInvalidOptions, flag, value, strings.Join(errs, "; "))
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

// ManagerOptions returns o.Manager with what o sets: the metrics server (HTTPS behind
// httpauth.FilterProvider unless InsecureMetrics), the probe address, leader election
// (off when Sharded), the webhook server of WebhookCertDir and WebhookPort (HTTP/1.1
// only; unless Manager.WebhookServer is set), the cache (apply.CacheOptions scoped to
// Namespace) and reconcile.UncachedObjects read past it.
func (o Options) ManagerOptions() ctrl.Options {
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
	mgrOpts.LeaderElection = o.LeaderElect && !o.Sharded
	mgrOpts.LeaderElectionID = o.LeaderElectionID
	mgrOpts.LeaderElectionNamespace = o.LeaderElectionNamespace
	if mgrOpts.WebhookServer == nil && o.WebhookCertDir != "" {
		port := o.WebhookPort
		if port == 0 {
			port = DefaultWebhookPort
		}
		mgrOpts.WebhookServer = webhook.NewServer(webhook.Options{CertDir: o.WebhookCertDir, Port: port,
			TLSOpts: []func(*tls.Config){http1Only}})
	}
	// Secrets and ConfigMaps are cached only when the operator wrote them (or ESO synced
	// them with its label), so memory does not grow with the cluster.
	mgrOpts.Cache = apply.CacheOptions(o.FieldManager)
	if o.Namespace != "" {
		mgrOpts.Cache.DefaultNamespaces = map[string]cache.Config{o.Namespace: {}}
	}
	mgrOpts.Client.Cache = &client.CacheOptions{DisableFor: reconcile.UncachedObjects()}
	return mgrOpts
}

// http1Only offers HTTP/1.1 only on the metrics and webhook servers, as kubebuilder's scaffold does
// (HTTP/2 stream resets cost a server more than they cost the client).
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
