package testenv

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/multicluster"
)

// operatorStartTimeout bounds how long StartOperator waits for the setup to run and the
// caches to sync.
var operatorStartTimeout = 60 * time.Second

// OperatorOptions configure [Env.StartOperator]: the options multicluster.RunOperator
// runs the operator with, and the cluster it reaches.
type OperatorOptions struct {
	// OperatorOptions are the operator's flags and manager options. Where they are
	// zero, the test defaults are filled in: FieldManager is apply.FieldManager,
	// Manager.Scheme is [Env.Scheme], the metrics server and the health probes are off
	// ("0": an empty address means off here, not multicluster's default), controller
	// name validation is skipped, so that several operators of one test binary may
	// register the same controller, and, with [Options.WebhookPaths] installed and no
	// Manager.WebhookServer, the manager serves webhooks where the installed
	// configurations point. Set Namespace to the test's namespace to scope the cache,
	// ClustersNamespace to a namespace of [Env.Namespace] to register target clusters
	// in ([Env.RegisterTarget]).
	multicluster.OperatorOptions
	// Config reaches the management cluster; nil means [Env.Config] (cluster admin).
	// Pass [Env.ConfigAs] to run the operator as exactly its ClusterRole allows.
	Config *rest.Config
}

// Operator is an operator [Env.StartOperator] runs: its manager and resolver, and a
// counter of every request the manager sends (its caches' lists and watches, its
// clients' reads past the cache and its writes) on the management cluster.
type Operator struct {
	// Manager is the operator's multicluster manager, started.
	Manager mcmanager.Manager
	// Resolver is the manager's resolver, the one the setup got.
	Resolver *multicluster.ClusterResolver
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
	o := opts.OperatorOptions
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
	cfg := opts.Config
	if cfg == nil {
		cfg = e.Config
	}
	cfg = rest.CopyConfig(cfg)
	counter := &RequestCounter{}
	cfg.Wrap(counter.Wrap)

	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *Operator, 1)
	done := make(chan error, 1)
	go func() {
		done <- multicluster.RunOperator(ctx, cfg, o,
			func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
				if err := setup(ctx, mgr, resolver); err != nil {
					return err
				}
				if webhooks {
					mgr.GetLocalManager().GetWebhookServer() // adds the server to the manager's runnables
				}
				ready <- &Operator{Manager: mgr, Resolver: resolver, Counter: counter}
				return nil
			})
	}()
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
		waitCancel() // RunOperator returned: nothing to wait for any more
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
	if !op.Manager.GetLocalManager().GetCache().WaitForCacheSync(waitCtx) {
		return nil, nil, errors.Join(errors.New("testenv: start operator: the management cluster's cache did not sync"), stop())
	}
	if webhooks {
		if err := waitForWebhookServer(waitCtx, op.Manager.GetLocalManager()); err != nil {
			return nil, nil, errors.Join(err, stop())
		}
	}
	return op, stop, nil
}
