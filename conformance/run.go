package conformance

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// OperatorOptions returns the options to start one instance of the operator with
// multicluster.RunOperator under the suite: fieldManager and scheme as the operator's
// main function sets them, the cache scoped to the suite's Namespace, the suite's Logger
// as the manager's logger, the metrics server and the health probes off (the suite
// reads the metrics from Registerer), and controller name validation skipped, because
// two instances run in one process for CheckTwoReplicas.
func (r RunOptions) OperatorOptions(fieldManager string, scheme *runtime.Scheme) multicluster.OperatorOptions {
	opts := multicluster.OperatorOptions{FieldManager: fieldManager, Namespace: r.Namespace,
		MetricsBindAddress: "0", HealthProbeBindAddress: "0"}
	skip := true
	opts.Manager.Scheme, opts.Manager.Logger, opts.Manager.Controller.SkipNameValidation = scheme, r.Logger, &skip
	if r.Sharded {
		opts.Sharded, opts.LeaderElectionNamespace = true, r.Namespace
		opts.Shard.Identity, opts.Shard.LeaseDuration, opts.Shard.RenewPeriod = r.Name, ShardLeaseDuration, ShardLeaseDuration/8
	}
	return opts
}

// Metrics returns the operator's step metrics under prefix, registered on the suite's
// Registerer (reconcile.NewMetrics).
func (r RunOptions) Metrics(prefix string) (*reconcile.Metrics, error) {
	return reconcile.NewMetrics(reconcile.MetricsOptions{Prefix: prefix, Registerer: r.Registerer})
}
