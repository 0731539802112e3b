package operator

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/shard"
)

// Operator is what a [Setup] gets to build its controllers from. Its fields are set by
// [Run] and must not be replaced.
type Operator struct {
	// Manager is the operator's manager, not started yet: register controllers with
	// ctrl.NewControllerManagedBy(Manager), webhooks on Manager.GetWebhookServer().
	Manager ctrl.Manager
	// Applier is the client the operator's steps write through: the manager's client
	// under FieldManager, a cache miss of a Secret or ConfigMap confirmed by APIReader.
	// With Options.Sharded it labels every child with shard.OwnerLabels of its owner, and
	// with ShardSelectors it confirms a cache miss of every kind.
	Applier *apply.Applier
	// Scheme is the manager's scheme (Options.Manager.Scheme).
	Scheme *runtime.Scheme
	// APIReader reads past the cache (Manager.GetAPIReader()).
	APIReader client.Reader
	// Logger is the manager's logger.
	Logger logr.Logger
	// FieldManager is Options.FieldManager.
	FieldManager string
	// Namespace is the one namespace the cache holds (--namespace), empty for all: a
	// non-empty one makes the operator namespace-scoped.
	Namespace string
	// Shard is this replica's member of the shard ring with Options.Sharded, nil
	// otherwise. The setup then gates each reconciler of a custom resource with
	// shard.Gate(Shard, ...) and, when Shard.ServerSide() is false, watches
	// shard.Requeue(Shard, ...) next to the kind, else calls Shard.Select with the kind's
	// resource; it registers the children kinds the Applier writes with
	// Shard.SelectOwned. All of it before the manager starts (package shard, "Wiring a
	// controller").
	Shard *shard.Member
}

// Setup registers an operator's controllers (and webhooks) before its manager starts.
// An error stops [Run] before anything starts.
type Setup func(ctx context.Context, op Operator) error

// Run runs a single-cluster operator on the cluster behind cfg until ctx ends (main
// passes ctrl.SetupSignalHandler() and ctrl.GetConfigOrDie(), or uses [Main]): it
// validates opts, builds the manager of [Options.Scheme] and [Options.ManagerOptions]
// and the Applier, runs setup, then Options.SetupWebhooks when the manager serves
// webhooks, adds the ping checks "healthz" and "readyz" and starts the manager. It
// returns nil once ctx ended and the manager stopped cleanly, else the first error,
// naming what failed.
//
// With Options.Sharded it first joins the shard ring ([JoinRing]) and builds the manager
// on the config that returns, leader election off; the member runs in the manager
// ([RingRunnable]) and is Operator.Shard; the Applier stamps every child with
// shard.OwnerLabels of its owner and, with ShardSelectors, confirms every cache miss
// through the API reader (apply.ApplierOptions.SelectedCache). A setup that gated no
// reconciler (shard.Member.Gated) is refused with [ErrInvalidOptions] before the manager
// starts: every replica would reconcile every custom resource.
func Run(ctx context.Context, cfg *rest.Config, opts Options, setup Setup) error {
	if setup == nil {
		return fmt.Errorf("%w: the setup function is nil", ErrInvalidOptions)
	}
	if cfg == nil {
		return fmt.Errorf("%w: rest config is nil", ErrInvalidOptions)
	}
	if err := opts.Validate(); err != nil {
		return err
	}
	scheme, err := opts.Scheme()
	if err != nil {
		return err
	}
	opts.Manager.Scheme = scheme
	var member *shard.Member
	if opts.Sharded {
		opts.LeaderElect = false
		if member, cfg, err = JoinRing(ctx, cfg, opts); err != nil {
			return err
		}
	}
	mgr, err := ctrl.NewManager(cfg, opts.ManagerOptions())
	if err != nil {
		return opts.explain(fmt.Errorf("operator manager: %w", err))
	}
	applierOpts := apply.ApplierOptions{FieldManager: opts.FieldManager, APIReader: mgr.GetAPIReader()}
	if member != nil {
		applierOpts.OwnerLabels, applierOpts.SelectedCache = shard.OwnerLabels, opts.ShardSelectors
		if err := mgr.Add(RingRunnable(member)); err != nil {
			return release(mgr.Start, fmt.Errorf("operator shard ring: %w", err))
		}
	}
	op := Operator{
		Manager:      mgr,
		Applier:      apply.NewApplier(mgr.GetClient(), applierOpts),
		Scheme:       mgr.GetScheme(),
		APIReader:    mgr.GetAPIReader(),
		Logger:       mgr.GetLogger(),
		FieldManager: opts.FieldManager,
		Namespace:    opts.Namespace,
		Shard:        member,
	}
	if err := setup(ctx, op); err != nil {
		return release(mgr.Start, fmt.Errorf("operator setup: %w", err))
	}
	if member != nil && member.Gated() == 0 {
		return release(mgr.Start, fmt.Errorf("%w: --sharded, but the setup gated no reconciler: every replica would reconcile every custom resource; "+
			"wrap each reconciler with shard.Gate(op.Shard, ...)", ErrInvalidOptions))
	}
	if err := opts.RegisterWebhooks(mgr); err != nil {
		return release(mgr.Start, err)
	}
	if err := AddProbes(mgr); err != nil {
		return release(mgr.Start, err)
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("operator manager: %w", err)
	}
	return nil
}

// RegisterWebhooks calls o.SetupWebhooks on mgr when o serves webhooks
// ([Options.ServesWebhooks]), wrapping its error; nothing otherwise. [Run] calls it after
// the setup, as a bootstrap built on this package (multicluster.RunOperator) does.
func (o Options) RegisterWebhooks(mgr ctrl.Manager) error {
	if o.SetupWebhooks == nil || !o.ServesWebhooks() {
		return nil
	}
	if err := o.SetupWebhooks(mgr); err != nil {
		return fmt.Errorf("operator admission webhooks: %w", err)
	}
	return nil
}

// explain adds to err, building a manager, the flags that fix its usual cause outside
// a cluster: leader election without --leader-election-namespace.
func (o Options) explain(err error) error {
	if o.LeaderElect && o.LeaderElectionNamespace == "" {
		return fmt.Errorf("%w (outside a cluster give --leader-election-namespace, or --leader-elect=false for a local run)", err)
	}
	return err
}

// AddProbes adds the ping checks "healthz" (/healthz) and "readyz" (/readyz) to mgr.
func AddProbes(mgr manager.Manager) error {
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("health check healthz: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("readiness check readyz: %w", err)
	}
	return nil
}

// release returns err after freeing what a manager that never ran holds: building one
// binds the probe address, which only its stop closes, so start (the manager's Start)
// runs with a context that has already ended. What start reports is dropped.
func release(start func(context.Context) error, err error) error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = start(ctx)
	return err
}
