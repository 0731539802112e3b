package testenv

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/c5c3/reconciler-sdk/apply"
)

// StartManager starts a controller-runtime manager on the control plane and returns it
// with a counter of every request it sends (its cache's lists and watches, its client's
// reads past the cache and its writes). Where opts leaves them zero, the test defaults
// are filled in: Scheme is [Env.Scheme], the metrics server and the health probes are
// off (BindAddress "0") and controller name validation is skipped, so that several
// managers of one test binary may register the same controller. Scope the cache with
// opts.Cache (e.g. DefaultNamespaces: the test's namespace) and read kinds past it with
// opts.Client.Cache.DisableFor. With [Options.WebhookPaths] installed and no
// opts.WebhookServer, the manager serves webhooks where the installed configurations
// point (see [Env.WebhookServerOptions]); register handlers on mgr.GetWebhookServer().
//
// StartManager returns once the cache has synced (and the webhook server listens); the manager stops when the test ends,
// and an error from its Start fails the test. [Env.RunManager] is the same without a
// testing.TB: it returns a stop function instead.
func (e *Env) StartManager(t testing.TB, opts ctrl.Options) (manager.Manager, *RequestCounter) {
	t.Helper()
	mgr, counter, stop, err := e.RunManager(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return mgr, counter
}

// RunManager starts a manager as [Env.StartManager] does, with the same test defaults
// and request counter, and returns once its cache has synced. Call stop when done: it
// stops the manager, waits for it and returns the error its Start returned. On error
// nothing is left running. Use it where there is no testing.TB (an Example, a tool);
// in a test prefer StartManager, which stops the manager when the test ends.
func (e *Env) RunManager(opts ctrl.Options) (mgr manager.Manager, counter *RequestCounter, stop func() error, err error) {
	if opts.Scheme == nil {
		opts.Scheme = e.Scheme
	}
	if opts.Metrics.BindAddress == "" {
		opts.Metrics.BindAddress = "0"
	}
	if opts.HealthProbeBindAddress == "" {
		opts.HealthProbeBindAddress = "0"
	}
	if opts.Controller.SkipNameValidation == nil {
		opts.Controller.SkipNameValidation = new(true)
	}
	webhooks := false
	if opts.WebhookServer == nil {
		if wo, ok := e.WebhookServerOptions(); ok {
			opts.WebhookServer = webhook.NewServer(wo)
			webhooks = true
		}
	}
	counter = &RequestCounter{}
	cfg := rest.CopyConfig(e.Config)
	cfg.Wrap(counter.Wrap)
	mgr, err = ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("testenv: new manager: %w", err)
	}
	if webhooks {
		mgr.GetWebhookServer() // adds the server to the manager's runnables
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	var stopErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			stopErr = <-done
		})
		return stopErr
	}
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return nil, nil, nil, errors.Join(errors.New("testenv: manager cache did not sync"), stop())
	}
	if webhooks {
		if err := waitForWebhookServer(ctx, mgr); err != nil {
			return nil, nil, nil, errors.Join(err, stop())
		}
	}
	return mgr, counter, stop, nil
}

// quietTimeout bounds how long ExpectQuiet waits for the first quiet pass.
var quietTimeout = 30 * time.Second

// ExpectQuiet asserts that pass, a reconcile pass through a client whose requests
// counter counts (typically a manager's from [Env.StartManager]), converges to a quiet
// pass: one that records no change (no write reported through [apply.WithWrites]
// created, configured or deleted anything) and sends exactly gets GET requests and no
// other request — gets is 0 when every read is served by the cache, and the number of
// reads past it otherwise.
//
// It runs pass until a pass is quiet (the informers have caught up with the earlier
// passes' writes), failing the test if none is within 30 seconds, then runs three more
// passes and reports each of them that is not quiet. An error from pass fails the test.
func ExpectQuiet(t testing.TB, counter *RequestCounter, gets int, pass func(context.Context) error) {
	t.Helper()
	quiet := func(ctx context.Context) (bool, []apply.Write, int, error) {
		ctx, writes := apply.WithWrites(ctx)
		counter.Reset()
		if err := pass(ctx); err != nil {
			return false, nil, 0, err
		}
		n := counter.Total()
		changed := writes.Changed()
		return n == gets && counter.Method(http.MethodGet) == gets && len(changed) == 0, changed, n, nil
	}
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, quietTimeout, true,
		func(ctx context.Context) (bool, error) {
			ok, _, _, err := quiet(ctx)
			return ok, err
		})
	if err != nil {
		t.Fatalf("the passes never converged to sending %d GET and nothing else: %v", gets, err)
	}
	for i := range 3 {
		ok, changed, n, err := quiet(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Errorf("converged pass %d sent %d requests and recorded %v, want %d GET and nothing", i+1, n, changed, gets)
		}
	}
}

// FieldManagers lists obj's managedFields entries, in order, as "manager/Operation"
// (e.g. "my-operator/Apply"): those of the object itself, and those of the named
// subresources as "manager/Operation/subresource" (e.g. "my-operator/Update/status").
// The entries of other subresources (a controller's or a simulator's status writes,
// unless "status" is named) are left out.
func FieldManagers(obj client.Object, subresources ...string) []string {
	var out []string
	for _, mf := range obj.GetManagedFields() {
		s := mf.Manager + "/" + string(mf.Operation)
		if mf.Subresource != "" {
			if !slices.Contains(subresources, mf.Subresource) {
				continue
			}
			s += "/" + mf.Subresource
		}
		out = append(out, s)
	}
	return out
}

// StartApplier starts a manager ([Env.StartManager]) whose cache sees only namespace ns
// and reads the uncached kinds past the cache, and returns an apply.Applier writing
// under fieldManager over the manager's client, with the counter of every request the
// manager sends: the setup of a "converged pass sends nothing" test.
func (e *Env) StartApplier(t testing.TB, ns, fieldManager string, uncached ...client.Object) (*apply.Applier, *RequestCounter) {
	t.Helper()
	opts := ctrl.Options{Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}}
	if len(uncached) > 0 {
		opts.Client = client.Options{Cache: &client.CacheOptions{DisableFor: uncached}}
	}
	mgr, counter := e.StartManager(t, opts)
	return apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{FieldManager: fieldManager}), counter
}

// WriteStrings renders writes with apply.Write.String ("Kind ns/name action fields"),
// for comparing what a pass wrote with cmp.Diff.
func WriteStrings(writes []apply.Write) []string {
	var out []string // nil for no writes, as cmp.Diff against a nil want expects
	for _, w := range writes {
		out = append(out, w.String())
	}
	return out
}

// TargetApplier wraps c into the apply.Applier an operator writes to a target cluster
// with: it writes under fieldManager and claims children for managementCluster with
// ownership labels instead of an owner reference (apply.RemoteOwnership). One control
// plane is enough to test a helper's target-cluster path: the claim, not the second
// API server, is what differs.
func TargetApplier(c client.Client, fieldManager, managementCluster string) *apply.Applier {
	return apply.NewApplier(c, apply.ApplierOptions{
		FieldManager: fieldManager,
		Remote:       &apply.RemoteOwnership{ManagementCluster: managementCluster},
	})
}

// Go runs start (a manager's Start, an operator's run function) in a goroutine with a
// context that is cancelled when the test ends; the cleanup then waits for start to
// return and reports a non-nil error with t.Errorf. It returns that context, for the
// clients and resolvers the test builds around what start runs. Use it for managers
// that [Env.StartManager] does not build, such as a multicluster-runtime manager.
func Go(t testing.TB, start func(ctx context.Context) error) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("stopped with an error: %v", err)
		}
	})
	return ctx
}
