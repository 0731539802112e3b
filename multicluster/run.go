package multicluster

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
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
	// Sharded is operator.Options.Sharded (--sharded): every replica active, each a
	// member of the ring operator.JoinRing builds, its CRReconcilers reconciling only the
	// CRs of its ranges. RunOperator refuses to start when the setup gated no reconciler
	// (shard.Gate: a CRReconciler does it).
	Sharded bool
	// ShardSelectors is operator.Options.ShardSelectors (--shard-selectors): a Sharded
	// replica's informers of the CR kinds (by shardSelector, where served) and of the
	// children kinds on the management cluster and on every target cluster (by the
	// bucket label, ManagerOptions.Shard) hold only its slice.
	ShardSelectors bool
	// Shard is operator.Options.Shard: it tunes the ring of Sharded.
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
		Sharded:                 o.Sharded,
		ShardSelectors:          o.ShardSelectors,
		Shard:                   o.Shard,
		Manager:                 o.Manager,
	}
}

// setOperator sets the single-cluster part of o to op.
func (o *OperatorOptions) setOperator(op operator.Options) {
	o.FieldManager, o.LeaderElectionID, o.LeaderElectionNamespace = op.FieldManager, op.LeaderElectionID, op.LeaderElectionNamespace
	o.MetricsBindAddress, o.InsecureMetrics, o.MetricsCertDir = op.MetricsBindAddress, op.InsecureMetrics, op.MetricsCertDir
	o.HealthProbeBindAddress, o.LeaderElect, o.Namespace, o.Manager = op.HealthProbeBindAddress, op.LeaderElect, op.Namespace, op.Manager
	o.WebhookCertDir, o.WebhookPort, o.SetupWebhooks, o.AddToScheme = op.WebhookCertDir, op.WebhookPort, op.SetupWebhooks, op.AddToScheme
	o.Sharded, o.ShardSelectors, o.Shard = op.Sharded, op.ShardSelectors, op.Shard
}

// BindFlags binds on fs the flags of operator.Options.BindFlags (to o's fields, the
// sharding ones included),
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
		if member, cfg, err = operator.JoinRing(ctx, cfg, opts.Operator()); err != nil {
			if errors.Is(err, operator.ErrInvalidOptions) {
				return &invalidOptions{err}
			}
			return err
		}
	}
	mgrOpts := ManagerOptions{ClustersNamespace: opts.ClustersNamespace, FieldManager: opts.FieldManager, Kubeconfig: opts.Kubeconfig}
	if opts.ShardSelectors {
		mgrOpts.Shard = member // the children on the target clusters too
	}
	mgr, err := NewManager(cfg, opts.ManagerOptions(), mgrOpts)
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
		resolverOpts.Applier.OwnerLabels = shard.OwnerLabels
		resolverOpts.Applier.SelectedCache = opts.ShardSelectors
		if err := mgr.GetLocalManager().Add(operator.RingRunnable(member)); err != nil {
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
