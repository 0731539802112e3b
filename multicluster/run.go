package multicluster

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/operator"
	"github.com/c5c3/reconciler-sdk/shard"
)

// Defaults of [OperatorOptions], as [DefaultOperatorOptions] sets them.
const (
	// DefaultMetricsBindAddress is where the metrics endpoint listens: ":8080".
	//
	// Deprecated: use operator.DefaultMetricsBindAddress.
	DefaultMetricsBindAddress = operator.DefaultMetricsBindAddress
	// DefaultHealthProbeBindAddress is where /healthz and /readyz listen: ":8081".
	//
	// Deprecated: use operator.DefaultHealthProbeBindAddress.
	DefaultHealthProbeBindAddress = operator.DefaultHealthProbeBindAddress
)

// OperatorOptions configure [RunOperator]: the fields of the single-cluster bootstrap's
// operator.Options (flags, manager, scheme, metrics, probes, leader election, admission
// webhooks; each documented there, [OperatorOptions.Operator] returns them) and the
// target clusters. Start from [DefaultOperatorOptions] and bind the flags with
// [OperatorOptions.BindFlags].
type OperatorOptions struct {
	// FieldManager is operator.Options.FieldManager; it also selects what each target
	// cluster's cache keeps and names the resolver's Appliers (unless
	// Resolver.Applier.FieldManager names another). Required.
	FieldManager string
	// LeaderElectionID is operator.Options.LeaderElectionID.
	LeaderElectionID string
	// LeaderElectionNamespace is operator.Options.LeaderElectionNamespace.
	LeaderElectionNamespace string
	// MetricsBindAddress is operator.Options.MetricsBindAddress.
	MetricsBindAddress string
	// InsecureMetrics is operator.Options.InsecureMetrics (--metrics-secure=false).
	InsecureMetrics bool
	// MetricsCertDir is operator.Options.MetricsCertDir.
	MetricsCertDir string
	// HealthProbeBindAddress is operator.Options.HealthProbeBindAddress.
	HealthProbeBindAddress string
	// LeaderElect is operator.Options.LeaderElect.
	LeaderElect bool
	// Namespace is operator.Options.Namespace.
	Namespace string
	// WebhookCertDir is operator.Options.WebhookCertDir (--webhook-cert-path).
	WebhookCertDir string
	// WebhookPort is operator.Options.WebhookPort (--webhook-port).
	WebhookPort int
	// SetupWebhooks is operator.Options.SetupWebhooks: it registers the admission
	// webhooks on the local manager, after the setup, when webhooks are served.
	SetupWebhooks func(ctrl.Manager) error
	// AddToScheme is operator.Options.AddToScheme: the operator's own kinds.
	AddToScheme []func(*runtime.Scheme) error
	// ClustersNamespace is the namespace of the kubeconfig Secrets that register target
	// clusters (--clusters-namespace, see [NewManager]); empty means none.
	ClustersNamespace string
	// Kubeconfig bounds what those Secrets may make the operator do
	// ([KubeconfigOptions]; the --insecure-kubeconfig-* flags).
	Kubeconfig KubeconfigOptions
	// Sharded (--sharded) runs every replica of the Deployment active: each is a member
	// of a ring (package shard) named after FieldManager, whose Leases live in
	// LeaderElectionNamespace (in a cluster: the pod's namespace), and its CRReconcilers
	// reconcile only the CRs of its ranges. Leader election is then off. Where the API
	// server serves shardSelector and ShardSelectors is set, the CR informers hold only
	// the replica's slice; otherwise they hold every CR and the others' are filtered.
	// RunOperator refuses to start when the setup gated no reconciler (shard.Gate: a
	// CRReconciler does it).
	Sharded bool
	// ShardSelectors (--shard-selectors) makes a Sharded replica's CR informers list and
	// watch only its slice, with the API server's shardSelector, where the server serves
	// it (Kubernetes 1.36+, feature gate ShardedListAndWatch); elsewhere, and without it,
	// they hold every CR and the others' are filtered. Leave it off when a controller
	// reads CRs of a sharded kind other than its own (a satellite's parent, a cross
	// reference): those reads then miss the other replicas' CRs.
	ShardSelectors bool
	// Shard tunes the ring of Sharded: empty Namespace and Ring take the values above,
	// an empty Identity the host name (the pod's name), zero durations shard's defaults.
	Shard shard.Options
	// Manager is operator.Options.Manager; the cache is [CacheOptions] for
	// FieldManager, ClustersNamespace and Namespace.
	Manager ctrl.Options
	// Resolver configures the resolver handed to the setup ([NewResolver]); an empty
	// Applier.FieldManager means FieldManager.
	Resolver ResolverOptions
}

// DefaultOperatorOptions returns operator.DefaultOptions without target clusters:
// leader election on, metrics over HTTPS behind authentication and authorization.
func DefaultOperatorOptions() OperatorOptions {
	var o OperatorOptions
	o.setOperator(operator.DefaultOptions())
	return o
}

// Operator returns the single-cluster part of o.
func (o OperatorOptions) Operator() operator.Options {
	return operator.Options{
		FieldManager:            o.FieldManager,
		LeaderElectionID:        o.LeaderElectionID,
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		MetricsBindAddress:      o.MetricsBindAddress,
		InsecureMetrics:         o.InsecureMetrics,
		MetricsCertDir:          o.MetricsCertDir,
		HealthProbeBindAddress:  o.HealthProbeBindAddress,
		LeaderElect:             o.LeaderElect,
		Namespace:               o.Namespace,
		WebhookCertDir:          o.WebhookCertDir,
		WebhookPort:             o.WebhookPort,
		SetupWebhooks:           o.SetupWebhooks,
		AddToScheme:             o.AddToScheme,
		Manager:                 o.Manager,
	}
}

// setOperator sets the single-cluster part of o to op.
func (o *OperatorOptions) setOperator(op operator.Options) {
	o.FieldManager, o.LeaderElectionID, o.LeaderElectionNamespace = op.FieldManager, op.LeaderElectionID, op.LeaderElectionNamespace
	o.MetricsBindAddress, o.InsecureMetrics, o.MetricsCertDir = op.MetricsBindAddress, op.InsecureMetrics, op.MetricsCertDir
	o.HealthProbeBindAddress, o.LeaderElect, o.Namespace, o.Manager = op.HealthProbeBindAddress, op.LeaderElect, op.Namespace, op.Manager
	o.WebhookCertDir, o.WebhookPort, o.SetupWebhooks, o.AddToScheme = op.WebhookCertDir, op.WebhookPort, op.SetupWebhooks, op.AddToScheme
}

// BindFlags binds on fs the flags of operator.Options.BindFlags (to o's fields),
// --clusters-namespace and those of [KubeconfigOptions.BindFlags], each defaulting to
// o's current value.
func (o *OperatorOptions) BindFlags(fs *flag.FlagSet) {
	shared := o.Operator()
	own := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	shared.BindFlags(own)
	own.VisitAll(func(f *flag.Flag) { fs.Var(&sharedFlag{Value: f.Value, o: o, shared: &shared}, f.Name, f.Usage) })
	fs.StringVar(&o.ClustersNamespace, "clusters-namespace", o.ClustersNamespace,
		"namespace of the kubeconfig Secrets that register target clusters (none when empty)")
	o.Kubeconfig.BindFlags(fs)
	fs.BoolVar(&o.Sharded, "sharded", o.Sharded,
		"run every replica active, each reconciling the custom resources of its shard of the UID hash space (Leases in the leader election namespace); turns leader election off")
	fs.BoolVar(&o.ShardSelectors, "shard-selectors", o.ShardSelectors,
		"with --sharded, have the API server send each replica only its custom resources (shardSelector, where served: Kubernetes 1.36+ with ShardedListAndWatch); not for operators whose controllers read other custom resources of a sharded kind")
}

// sharedFlag is a flag of operator.Options (Value, bound to a field of *shared) that
// sets the same field of o: shared is refreshed from o, set, and copied back.
type sharedFlag struct {
	flag.Value
	o      *OperatorOptions
	shared *operator.Options
}

// String returns the flag's current value.
func (f *sharedFlag) String() string {
	if f == nil || f.o == nil {
		return ""
	}
	*f.shared = f.o.Operator()
	return f.Value.String()
}

// Set parses v into the field of o the flag names.
func (f *sharedFlag) Set(v string) error {
	*f.shared = f.o.Operator()
	if err := f.Value.Set(v); err != nil {
		return err
	}
	f.o.setOperator(*f.shared)
	return nil
}

// IsBoolFlag is that of the operator's flag: a boolean flag may be given without a value.
func (f *sharedFlag) IsBoolFlag() bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// Validate reports the first option RunOperator cannot run with, naming the flag (or
// the field): errors.Is matches both [ErrInvalidOptions] and operator.ErrInvalidOptions.
func (o OperatorOptions) Validate() error {
	if err := o.Operator().Validate(); err != nil {
		return &invalidOptions{err}
	}
	if o.ClustersNamespace != "" {
		if errs := validation.IsDNS1123Label(o.ClustersNamespace); len(errs) > 0 {
			return &invalidOptions{fmt.Errorf("%w: --clusters-namespace %q is not a namespace name: %s",
				operator.ErrInvalidOptions, o.ClustersNamespace, strings.Join(errs, "; "))}
		}
	}
	return nil
}

// invalidOptions is an error of operator.Options.Validate that is also ErrInvalidOptions.
type invalidOptions struct{ err error }

func (e *invalidOptions) Error() string        { return e.err.Error() }
func (e *invalidOptions) Unwrap() error        { return e.err }
func (e *invalidOptions) Is(target error) bool { return target == ErrInvalidOptions }

// ManagerOptions returns operator.Options.ManagerOptions of o with the cache of
// [CacheOptions] for FieldManager, ClustersNamespace and Namespace.
func (o OperatorOptions) ManagerOptions() ctrl.Options {
	mgrOpts := o.Operator().ManagerOptions()
	var namespaces []string
	if o.Namespace != "" {
		namespaces = []string{o.Namespace}
	}
	mgrOpts.Cache = CacheOptions(o.FieldManager, o.ClustersNamespace, namespaces...)
	return mgrOpts
}

// OperatorSetup registers an operator's controllers (and webhooks) on mgr, before it
// starts; resolver is the [ClusterResolver] of mgr. An error stops [RunOperator] before
// the manager starts.
type OperatorSetup func(ctx context.Context, mgr mcmanager.Manager, resolver *ClusterResolver) error

// RunOperator is operator.Run with target clusters: it validates opts, builds the
// manager of [NewManager] (the scheme of operator.Options.Scheme, the kubeconfig
// provider of ClustersNamespace, the cache of [OperatorOptions.ManagerOptions]) and its
// [ClusterResolver], runs setup, then SetupWebhooks when webhooks are served, adds the
// probes and runs the manager on cfg until ctx ends. It returns nil once ctx ended and
// the manager stopped cleanly, else the first error, naming what failed.
func RunOperator(ctx context.Context, cfg *rest.Config, opts OperatorOptions, setup OperatorSetup) error {
	if setup == nil {
		return fmt.Errorf("%w: the setup function is nil", ErrInvalidOptions)
	}
	if err := opts.Validate(); err != nil {
		return err
	}
	scheme, err := opts.Operator().Scheme()
	if err != nil {
		return err
	}
	opts.Manager.Scheme = scheme
	var member *shard.Member
	if opts.Sharded {
		opts.LeaderElect = false
		if member, cfg, err = joinRing(ctx, cfg, opts); err != nil {
			return err
		}
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
	if member != nil {
		resolverOpts.Shard = member
		if err := mgr.GetLocalManager().Add(ringRunnable{member}); err != nil {
			return release(mgr, err)
		}
	}
	resolver, err := NewResolver(ctx, mgr, resolverOpts)
	if err != nil {
		return release(mgr, err)
	}
	if err := setup(ctx, mgr, resolver); err != nil {
		return release(mgr, fmt.Errorf("operator setup: %w", err))
	}
	if member != nil && member.Gated() == 0 {
		return release(mgr, fmt.Errorf("%w: --sharded, but the setup gated no reconciler: every replica would reconcile every CR; "+
			"build it with NewCRReconciler, or wrap it with shard.Gate(resolver.Shard(), ...)", ErrInvalidOptions))
	}
	if err := opts.Operator().RegisterWebhooks(mgr.GetLocalManager()); err != nil {
		return release(mgr, err)
	}
	if err := operator.AddProbes(mgr.GetLocalManager()); err != nil {
		return release(mgr, err)
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

// inClusterNamespace is where a pod's own namespace is mounted.
const inClusterNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// joinRing builds this replica's member of the ring of opts.FieldManager and, with
// ShardSelectors where the API server honours shardSelector, the config whose list and watch requests of the CR
// kinds carry the member's ranges (shard.Member.ServerSideTransport).
func joinRing(ctx context.Context, cfg *rest.Config, opts OperatorOptions) (*shard.Member, *rest.Config, error) {
	ns := cmp.Or(opts.Shard.Namespace, opts.LeaderElectionNamespace)
	if ns == "" {
		b, err := os.ReadFile(inClusterNamespace)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: --sharded outside a cluster needs --leader-election-namespace (the namespace of the ring's Leases)", ErrInvalidOptions)
		}
		ns = strings.TrimSpace(string(b))
	}
	c, err := client.New(cfg, client.Options{Scheme: opts.Manager.Scheme})
	if err != nil {
		return nil, nil, fmt.Errorf("shard ring client: %w", err)
	}
	so := opts.Shard
	if so.Namespace == "" {
		so.Namespace = ns
	}
	if so.Ring == "" {
		so.Ring = opts.FieldManager
	}
	member, err := shard.NewMember(c, so)
	if err != nil {
		return nil, nil, err
	}
	served := false
	if opts.ShardSelectors {
		if served, err = shard.ServesShardSelector(ctx, c, &coordinationv1.LeaseList{}, client.InNamespace(ns)); err != nil {
			return nil, nil, err
		}
	}
	log.FromContext(ctx).Info("joining the shard ring", "ring", so.Ring, "namespace", so.Namespace,
		"member", member.Identity(), "serverSideSelectors", served)
	if served {
		cfg = rest.CopyConfig(cfg)
		cfg.Wrap(member.ServerSideTransport())
	}
	return member, cfg, nil
}

// ringRunnable runs a shard member in the manager, leader or not: on the way out it
// drains its passes and deletes its Lease (a failure is logged: its Lease then expires).
type ringRunnable struct{ m *shard.Member }

// Start implements manager.Runnable.
func (r ringRunnable) Start(ctx context.Context) error {
	if err := r.m.Run(ctx); err != nil {
		log.FromContext(ctx).Error(err, "leaving the shard ring")
	}
	return nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: every replica runs it.
func (ringRunnable) NeedLeaderElection() bool { return false }
