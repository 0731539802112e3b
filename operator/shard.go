package operator

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/shard"
)

// inClusterNamespace is where a pod's own namespace is mounted.
const inClusterNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// JoinRing builds this replica's member of the shard ring that opts describe (Sharded:
// Options.Shard, with an empty Ring meaning FieldManager and an empty Namespace
// LeaderElectionNamespace, else the pod's own namespace) and returns it with the config
// the manager is to be built on. The member's client reads past any cache, on cfg as it
// is given. Without ShardSelectors the returned config is cfg; with it, a copy whose
// transport narrows the lists and watches of the member's kinds: on an API server that
// serves shardSelector (shard.ServesShardSelector, asked here) it is
// shard.Member.ServerSideTransport (the custom resources of Member.Select by
// shardSelector, the children of Member.SelectOwned by the bucket label), on any other
// shard.Member.OwnedTransport (the children only). The member is not running: add
// [RingRunnable] of it to the manager. Outside a cluster without a namespace for the
// Leases, the error wraps [ErrInvalidOptions] naming --leader-election-namespace; invalid
// Shard options wrap shard.ErrInvalidOptions.
func JoinRing(ctx context.Context, cfg *rest.Config, opts Options) (*shard.Member, *rest.Config, error) {
	if cfg == nil {
		return nil, nil, fmt.Errorf("%w: rest config is nil", ErrInvalidOptions)
	}
	so := opts.Shard
	so.Namespace = cmp.Or(so.Namespace, opts.LeaderElectionNamespace)
	if so.Namespace == "" {
		b, err := os.ReadFile(inClusterNamespace)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: --sharded outside a cluster needs --leader-election-namespace (the namespace of the ring's Leases)", ErrInvalidOptions)
		}
		so.Namespace = strings.TrimSpace(string(b))
	}
	so.Ring = cmp.Or(so.Ring, opts.FieldManager)
	c, err := client.New(cfg, client.Options{Scheme: opts.Manager.Scheme})
	if err != nil {
		return nil, nil, fmt.Errorf("shard ring client: %w", err)
	}
	member, err := shard.NewMember(c, so)
	if err != nil {
		return nil, nil, err
	}
	served := false
	if opts.ShardSelectors {
		if served, err = shard.ServesShardSelector(ctx, c, &coordinationv1.LeaseList{}, client.InNamespace(so.Namespace)); err != nil {
			return nil, nil, fmt.Errorf("shard ring: asking whether the API server serves shardSelector: %w", err)
		}
		cfg = rest.CopyConfig(cfg)
		if served {
			cfg.Wrap(member.ServerSideTransport())
		} else {
			cfg.Wrap(member.OwnedTransport())
		}
	}
	log.FromContext(ctx).Info("joining the shard ring", "ring", so.Ring, "namespace", so.Namespace,
		"member", member.Identity(), "selectors", opts.ShardSelectors, "serverSideSelectors", served)
	return member, cfg, nil
}

// RingRunnable returns the runnable that runs m (shard.Member.Run) in a manager on every
// replica, leader or not, until the manager stops: on the way out the member drains its
// passes and releases its Lease. A failure to leave is logged, not returned (the Lease
// then expires and the others take its ranges over).
func RingRunnable(m *shard.Member) manager.Runnable { return ringRunnable{m} }

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
