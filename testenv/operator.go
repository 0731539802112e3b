package testenv

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	mccontroller "sigs.k8s.io/multicluster-runtime/pkg/controller"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/operator"
)

// operatorStartTimeout bounds how long StartOperator waits for the setup to run and the
// caches to sync.
var operatorStartTimeout = 60 * time.Second

// OperatorOptions configure the kit's operator runners ([Env.StartOperator],
// [Env.StartSingleClusterOperator]): the operator's options and the cluster it reaches.
type OperatorOptions struct {
	// OperatorOptions are the operator's flags and manager options. Where they are
	// zero, the test defaults are filled in: FieldManager is apply.FieldManager,
	// Manager.Scheme is [Env.Scheme], the metrics server and the health probes are off
	// ("0": an empty address means off here, not the bootstrap's default), controller
	// name validation is skipped, so that several operators of one test binary may
	// register the same controller, and, with [Options.WebhookPaths] installed and no
	// Manager.WebhookServer, the manager serves webhooks where the installed
	// configurations point. Set Namespace to the test's namespace to scope the cache,
	// ClustersNamespace to a namespace of [Env.Namespace] to register target clusters
	// in ([Env.RegisterTarget]; a single-cluster operator refuses one).
	multicluster.OperatorOptions
	// Config reaches the management cluster; nil means [Env.Config] (cluster admin).
	// Pass [Env.ConfigAs] to run the operator as exactly its ClusterRole allows.
	Config *rest.Config
}

// Operator is an operator a runner of the kit runs: its parts, the reconcilers its
// setup registered and a counter of every request the manager sends (its caches' lists
// and watches, its clients' reads past the cache and its writes) on the management
// cluster.
type Operator struct {
	// Manager is the operator's multicluster manager, started; nil for a
	// single-cluster operator.
	Manager mcmanager.Manager
	// Resolver is the manager's resolver, the one the setup got; nil for a
	// single-cluster operator.
	Resolver *multicluster.ClusterResolver
	// Local are the management cluster's parts: for a single-cluster operator what its
	// setup got; for a multicluster one the local manager, the resolver's local Applier
	// and the scheme, API reader, logger, field manager and namespace.
	Local operator.Operator
	// Reconcilers are the controllers the setup registered (with a ctrl.Builder or a
	// multicluster builder), in registration order. Each runs one pass of a
	// management-cluster request as its controller does (the controller's logger in the
	// context, panics recovered), so a test drives a pass with no reference of its own.
	Reconcilers []crreconcile.Reconciler
	// Counter counts the manager's requests to the management cluster.
	Counter *RequestCounter
}

// StartOperator runs an operator as its main function does, through
// multicluster.RunOperator with opts (test defaults filled in where zero, see
// [OperatorOptions]) and setup, which registers the operator's controllers. It returns
// once setup has run and the management cluster's cache has synced (and the webhook
// server listens); the operator stops when the test ends, and an error RunOperator
// returns then fails the test. An error of setup, or of the start, fails the test at
// once.
func (e *Env) StartOperator(t testing.TB, opts OperatorOptions, setup multicluster.OperatorSetup) *Operator {
	t.Helper()
	op, stop, err := e.RunOperator(opts, setup)
	return startedOperator(t, op, stop, err)
}

// StartSingleClusterOperator is [Env.StartOperator] for an operator without target
// clusters: it runs operator.Run with opts.Operator() (the same test defaults) and
// setup. A ClustersNamespace in opts fails the test.
func (e *Env) StartSingleClusterOperator(t testing.TB, opts OperatorOptions, setup operator.Setup) *Operator {
	t.Helper()
	op, stop, err := e.RunSingleClusterOperator(opts, setup)
	return startedOperator(t, op, stop, err)
}

// startedOperator fails t with err, or stops op when t ends.
func startedOperator(t testing.TB, op *Operator, stop func() error, err error) *Operator {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("operator: %v", err)
		}
	})
	return op
}

// RunOperator starts an operator as [Env.StartOperator] does, with the same test
// defaults, and returns once its setup has run and its cache has synced. Call stop when
// done: it ends the operator's context, waits for multicluster.RunOperator to return
// and returns its error. On error nothing is left running. Use it where there is no
// testing.TB; in a test prefer StartOperator, which stops the operator when the test
// ends.
func (e *Env) RunOperator(opts OperatorOptions, setup multicluster.OperatorSetup) (op *Operator, stop func() error, err error) {
	if setup == nil {
		return nil, nil, errors.New("testenv: start operator: the setup function is nil")
	}
	o, webhooks := e.operatorDefaults(opts.OperatorOptions)
	return e.startOperator(opts.Config, webhooks, func(ctx context.Context, cfg *rest.Config, counter *RequestCounter, ready chan<- *Operator) error {
		return multicluster.RunOperator(ctx, cfg, o,
			func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
				rec := &recorded{}
				if err := setup(ctx, &recordingMCManager{Manager: mgr, rec: rec}, resolver); err != nil {
					return err
				}
				local := mgr.GetLocalManager()
				if webhooks {
					local.GetWebhookServer() // adds the server to the manager's runnables
				}
				ready <- &Operator{Manager: mgr, Resolver: resolver, Counter: counter, Reconcilers: rec.list(),
					Local: operator.Operator{Manager: local, Applier: apply.ApplierOf(resolver.Local().Client),
						Scheme: local.GetScheme(), APIReader: resolver.Local().APIReader, Logger: local.GetLogger(),
						FieldManager: o.FieldManager, Namespace: o.Namespace}}
				return nil
			})
	})
}

// RunSingleClusterOperator is [Env.RunOperator] for an operator without target
// clusters ([Env.StartSingleClusterOperator]); stop returns what operator.Run returned.
func (e *Env) RunSingleClusterOperator(opts OperatorOptions, setup operator.Setup) (op *Operator, stop func() error, err error) {
	if setup == nil {
		return nil, nil, errors.New("testenv: start operator: the setup function is nil")
	}
	if opts.ClustersNamespace != "" {
		return nil, nil, fmt.Errorf("testenv: start operator: ClustersNamespace %q: a single-cluster operator has no target clusters",
			opts.ClustersNamespace)
	}
	o, webhooks := e.operatorDefaults(opts.OperatorOptions)
	return e.startOperator(opts.Config, webhooks, func(ctx context.Context, cfg *rest.Config, counter *RequestCounter, ready chan<- *Operator) error {
		return operator.Run(ctx, cfg, o.Operator(), func(ctx context.Context, parts operator.Operator) error {
			rec := &recorded{}
			recording := parts
			recording.Manager = &recordingManager{Manager: parts.Manager, rec: rec}
			if err := setup(ctx, recording); err != nil {
				return err
			}
			if webhooks {
				parts.Manager.GetWebhookServer() // adds the server to the manager's runnables
			}
			ready <- &Operator{Local: parts, Counter: counter, Reconcilers: rec.list()}
			return nil
		})
	})
}

// operatorDefaults returns o with the kit's test defaults filled in where zero, and
// whether the manager serves the kit's webhooks.
func (e *Env) operatorDefaults(o multicluster.OperatorOptions) (multicluster.OperatorOptions, bool) {
	if o.FieldManager == "" {
		o.FieldManager = apply.FieldManager
	}
	if o.Manager.Scheme == nil {
		o.Manager.Scheme = e.Scheme
	}
	if o.MetricsBindAddress == "" {
		o.MetricsBindAddress = "0"
	}
	if o.HealthProbeBindAddress == "" {
		o.HealthProbeBindAddress = "0"
	}
	if o.Manager.Controller.SkipNameValidation == nil {
		o.Manager.Controller.SkipNameValidation = new(true)
	}
	webhooks := false
	if o.Manager.WebhookServer == nil {
		if wo, ok := e.WebhookServerOptions(); ok {
			o.Manager.WebhookServer = webhook.NewServer(wo)
			webhooks = true
		}
	}
	return o, webhooks
}

// startOperator runs run (a bootstrap, on cfg or Env.Config with a request counter)
// until stop, and returns once run sent the operator on ready and the management
// cluster's cache synced (and, with webhooks, the webhook server listens).
func (e *Env) startOperator(cfg *rest.Config, webhooks bool, run func(ctx context.Context, cfg *rest.Config, counter *RequestCounter, ready chan<- *Operator) error) (op *Operator, stop func() error, err error) {
	if cfg == nil {
		cfg = e.Config
	}
	cfg = rest.CopyConfig(cfg)
	counter := &RequestCounter{}
	cfg.Wrap(counter.Wrap)

	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *Operator, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, counter, ready) }()
	var result error
	stopped := make(chan struct{})
	stop = func() error {
		cancel()
		<-stopped
		return result
	}
	waitCtx, waitCancel := context.WithTimeout(ctx, operatorStartTimeout)
	defer waitCancel()
	go func() {
		result = <-done
		close(stopped)
		waitCancel() // the bootstrap returned: nothing to wait for any more
	}()
	select {
	case op = <-ready:
	case <-stopped:
		cancel()
		return nil, nil, fmt.Errorf("testenv: start operator: %w", result)
	case <-waitCtx.Done():
		return nil, nil, errors.Join(errors.New("testenv: start operator: the setup did not run within "+
			operatorStartTimeout.String()), stop())
	}
	local := op.Local.Manager
	if !local.GetCache().WaitForCacheSync(waitCtx) {
		return nil, nil, errors.Join(errors.New("testenv: start operator: the management cluster's cache did not sync"), stop())
	}
	if webhooks {
		if err := waitForWebhookServer(waitCtx, local); err != nil {
			return nil, nil, errors.Join(err, stop())
		}
	}
	return op, stop, nil
}

// recorded is the list of controllers a setup registered.
type recorded struct {
	mu   sync.Mutex
	recs []crreconcile.Reconciler
}

// add records r when it is a controller: a controller-runtime one as it is, a
// multicluster one for requests of the management cluster.
func (r *recorded) add(run manager.Runnable) {
	var rec crreconcile.Reconciler
	switch c := run.(type) {
	case crcontroller.Controller:
		rec = c
	case mccontroller.Controller:
		rec = crreconcile.Func(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
			return c.Reconcile(ctx, mcreconcile.Request{Request: req})
		})
	default:
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
}

func (r *recorded) list() []crreconcile.Reconciler {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]crreconcile.Reconciler(nil), r.recs...)
}

// recordingManager is a manager that records the controllers added to it.
type recordingManager struct {
	manager.Manager
	rec *recorded
}

func (m *recordingManager) Add(run manager.Runnable) error {
	if err := m.Manager.Add(run); err != nil {
		return err
	}
	m.rec.add(run)
	return nil
}

// recordingMCManager is a multicluster manager that records the controllers added to
// it or to its local manager.
type recordingMCManager struct {
	mcmanager.Manager
	rec *recorded
}

func (m *recordingMCManager) Add(run mcmanager.Runnable) error {
	if err := m.Manager.Add(run); err != nil {
		return err
	}
	m.rec.add(run)
	return nil
}

func (m *recordingMCManager) GetLocalManager() manager.Manager {
	return &recordingManager{Manager: m.Manager.GetLocalManager(), rec: m.rec}
}
