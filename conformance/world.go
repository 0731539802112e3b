package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// instanceSeq makes RunOptions.Name unique in the process.
var instanceSeq atomic.Int64

// passKey is the context key of the pass a request belongs to.
type passKey struct{}

// pass is one call of the operator's reconciler, by its manager or by the suite.
type pass struct {
	replica string
	key     types.NamespacedName
	direct  bool // run by the suite
	start   time.Time

	mu       sync.Mutex
	end      time.Time
	done     bool
	res      ctrl.Result
	err      error
	requests []request
}

// record adds a request the pass sent.
func (p *pass) record(r request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests = append(p.requests, r)
}

// sent returns the requests the pass sent.
func (p *pass) sent() []request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// outcome returns the pass's result and error, and whether it has returned.
func (p *pass) outcome() (ctrl.Result, error, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.res, p.err, p.done
}

// replica is one running instance of the operator.
type replica struct {
	name   string
	mu     sync.Mutex
	inner  crreconcile.Reconciler
	exited chan struct{}
	err    error // what Start returned, once exited is closed
}

// reconciler returns the reconciler the instance wrapped, nil until it has.
func (r *replica) reconciler() crreconcile.Reconciler {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inner
}

// wrapped is the reconciler RunOptions.Wrap returns.
type wrapped struct {
	w     *world
	r     *replica
	inner crreconcile.Reconciler
}

// Reconcile runs the operator's pass and records it.
func (x *wrapped) Reconcile(ctx context.Context, req crreconcile.Request) (ctrl.Result, error) {
	p := x.w.run(ctx, x.r, x.inner, req.NamespacedName, false)
	res, err, _ := p.outcome()
	return res, err
}

// world is the state of one check: its namespace, the running operator instances,
// every pass they ran and every request they sent.
type world struct {
	t       testing.TB
	opts    Options
	check   string
	ns      string
	ctx     context.Context
	c       client.Client // the Env's cluster-admin client
	logs    *logCapture
	logger  logr.Logger
	metrics *prometheus.Registry
	faults  armedFault

	mu         sync.Mutex
	replicas   []*replica
	passes     []*pass
	sharded    bool      // the instances start as members of a shard ring (CheckSharded)
	background []request // requests sent outside any pass
	crs        []*unstructured.Unstructured
	childKinds []resourceKind
	// writeOnceByUID remembers writeOnceReason of each child read.
	writeOnceByUID map[types.UID]string
}

// newWorld makes a fresh namespace for a check; the world ends with t.
func newWorld(t testing.TB, opts Options, check string) *world {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	logs := &logCapture{}
	return &world{
		t: t, opts: opts, check: check, ns: opts.Env.Namespace(t), ctx: ctx, c: opts.Env.Client,
		logs: logs, logger: logr.New(&logSink{c: logs}), metrics: prometheus.NewRegistry(),
	}
}

// adminConfig is the Env's cluster-admin config without API warnings (listing every
// kind meets deprecated ones).
func (w *world) adminConfig() *rest.Config {
	cfg := rest.CopyConfig(w.opts.Env.Config)
	cfg.WarningHandler = rest.NoWarnings{}
	return cfg
}

// violation builds a finding of the world's check.
func (w *world) violation(object, field, fix, format string, args ...any) *Violation {
	return &Violation{Check: w.check, Object: object, Field: field, Problem: fmt.Sprintf(format, args...), Fix: fix}
}

// start runs one instance of the operator on cfg (the Env's admin config when nil)
// until the check ends, and returns once it has wrapped its reconciler.
func (w *world) start(name string, cfg *rest.Config) (*replica, error) {
	if cfg == nil {
		cfg = w.opts.Env.Config
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &transport{next: rt, w: w} })
	r := &replica{name: name, exited: make(chan struct{})}
	run := RunOptions{
		Namespace: w.ns,
		Wrap: func(inner crreconcile.Reconciler) crreconcile.Reconciler {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.inner == nil {
				r.inner = inner
			}
			return &wrapped{w: w, r: r, inner: inner}
		},
		Logger:     w.logger.WithValues("replica", name),
		Registerer: w.metrics,
		Name:       fmt.Sprintf("conformance-%s-%s-%d", strings.ToLower(w.check), name, instanceSeq.Add(1)),
		Sharded:    w.sharded,
	}
	ctx, cancel := context.WithCancel(w.ctx)
	go func() {
		defer close(r.exited)
		r.err = w.opts.Start(ctx, cfg, run)
	}()
	w.t.Cleanup(func() {
		cancel()
		select {
		case <-r.exited:
			if r.err != nil && !errors.Is(r.err, context.Canceled) {
				w.t.Errorf("conformance: operator instance %s stopped with: %v", name, r.err)
			}
		case <-time.After(30 * time.Second):
			w.t.Errorf("conformance: Start of instance %s did not return within 30s after its context ended", name)
		}
	})
	w.mu.Lock()
	w.replicas = append(w.replicas, r)
	w.mu.Unlock()
	deadline := time.Now().Add(w.opts.Timeout)
	for r.reconciler() == nil {
		select {
		case <-r.exited:
			if r.err == nil {
				return nil, fmt.Errorf("%w: Start returned nil before its context ended: it must run the manager until ctx ends", ErrStart)
			}
			return nil, fmt.Errorf("%w: Start returned before its context ended: %w", ErrStart, r.err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: Start did not call RunOptions.Wrap within %s: register the reconciler of the CR's controller as run.Wrap(reconciler)",
				ErrStart, w.opts.Timeout)
		}
	}
	return r, nil
}

// run calls inner for key as a pass of r, with the pass in the context so that the
// transport attributes its requests.
func (w *world) run(ctx context.Context, r *replica, inner crreconcile.Reconciler, key types.NamespacedName, direct bool) *pass {
	p := &pass{replica: r.name, key: key, direct: direct, start: time.Now()}
	w.mu.Lock()
	w.passes = append(w.passes, p)
	w.mu.Unlock()
	res, err := inner.Reconcile(context.WithValue(ctx, passKey{}, p), crreconcile.Request{NamespacedName: key})
	p.mu.Lock()
	p.res, p.err, p.end, p.done = res, err, time.Now(), true
	p.mu.Unlock()
	return p
}

// pass runs one pass of r's reconciler for cr itself, with the capturing logger.
func (w *world) pass(r *replica, cr *unstructured.Unstructured) *pass {
	ctx, cancel := context.WithTimeout(log.IntoContext(w.ctx, w.logger.WithValues("replica", r.name, "pass", "suite")), w.opts.Timeout)
	defer cancel()
	return w.run(ctx, r, r.reconciler(), client.ObjectKeyFromObject(cr), true)
}

// recordBackground records a request sent outside any pass (informers, event
// recorders, goroutines of the operator's own).
func (w *world) recordBackground(r request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.background = append(w.background, r)
}

// backgroundWrites returns the writes sent outside any pass between from and to,
// leaving out Events and Leases.
func (w *world) backgroundWrites(from, to time.Time) []request {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []request
	for _, r := range w.background {
		if r.isWrite() && !r.at.Before(from) && !r.at.After(to) && r.resource != "events" && r.resource != "leases" {
			out = append(out, r)
		}
	}
	return out
}

// passesSince returns the passes for key that started at or after since.
func (w *world) passesSince(key types.NamespacedName, since time.Time) []*pass {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*pass
	for _, p := range w.passes {
		if p.key == key && !p.start.Before(since) {
			out = append(out, p)
		}
	}
	return out
}

// allPasses returns every pass of the world.
func (w *world) allPasses() []*pass {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.passes)
}

// forbidden returns every request the API server answered 403.
func (w *world) forbidden() []request {
	var out []request
	for _, p := range w.allPasses() {
		for _, r := range p.sent() {
			if r.status == http.StatusForbidden {
				out = append(out, r)
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.background {
		if r.status == http.StatusForbidden {
			out = append(out, r)
		}
	}
	return out
}

// gvkOf returns obj's kind in the Env's scheme.
func (w *world) gvkOf(obj runtime.Object) (schema.GroupVersionKind, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok && !u.GroupVersionKind().Empty() {
		return u.GroupVersionKind(), nil
	}
	return apiutil.GVKForObject(obj, w.opts.Env.Scheme)
}

// toUnstructured copies a sample into the world's namespace, stripped of what the
// server sets.
func (w *world) toUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	gvk, err := w.gvkOf(obj)
	if err != nil {
		return nil, err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("conformance: convert %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(w.ns)
	u.SetResourceVersion("")
	u.SetUID("")
	u.SetGeneration(0)
	u.SetCreationTimestamp(metaZero)
	u.SetManagedFields(nil)
	u.SetOwnerReferences(nil)
	u.SetFinalizers(nil)
	delete(u.Object, "status")
	return u, nil
}

// createSamples creates every sample in the world's namespace.
func (w *world) createSamples() error {
	for _, s := range w.opts.Samples {
		u, err := w.toUnstructured(s)
		if err != nil {
			return err
		}
		if err := w.c.Create(w.ctx, u); err != nil {
			return fmt.Errorf("conformance: create sample %s: %w", describe(u), err)
		}
		w.mu.Lock()
		w.crs = append(w.crs, u)
		w.mu.Unlock()
	}
	return nil
}

// read returns the stored state of obj.
func (w *world) read(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(obj.GroupVersionKind())
	if err := w.c.Get(w.ctx, client.ObjectKeyFromObject(obj), u); err != nil {
		return nil, err
	}
	return u, nil
}

// typed converts a stored CR to the scheme's Go type, for MakeReady.
func (w *world) typed(u *unstructured.Unstructured) client.Object {
	obj, err := w.opts.Env.Scheme.New(u.GroupVersionKind())
	if err != nil {
		return u
	}
	co, ok := obj.(client.Object)
	if !ok || runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, co) != nil {
		return u
	}
	co.GetObjectKind().SetGroupVersionKind(u.GroupVersionKind())
	return co
}

// startAndConverge starts one instance, creates the samples and waits until each is
// Ready: the setup of most checks.
func (w *world) startAndConverge(cfg *rest.Config) (*replica, error) {
	r, err := w.start("a", cfg)
	if err != nil {
		return nil, err
	}
	if err := w.createSamples(); err != nil {
		return nil, err
	}
	return r, w.converge(nil)
}

// converge waits until every CR of the world has converged (ready: Current as kstatus
// reads it, and Ready=True for its current generation), calling MakeReady on every
// poll, within Options.Timeout and Options.MaxPasses passes of each CR. A CR that has
// not converged in time is a Convergence violation. With drive
// set, the suite also runs a pass of drive for each CR that is not Ready every
// second: after a pass of the suite's own failed, no requeue of the manager follows.
func (w *world) converge(drive *replica) error {
	since := time.Now()
	deadline := since.Add(w.opts.Timeout)
	makeReadyErr := map[string]error{}
	for round := 1; ; round++ {
		var pending []*unstructured.Unstructured
		why := map[string]string{}
		for _, cr := range w.crs {
			cur, err := w.read(cr)
			if err != nil {
				return fmt.Errorf("conformance: read %s: %w", describe(cr), err)
			}
			if w.opts.MakeReady != nil {
				makeReadyErr[describe(cr)] = w.opts.MakeReady(w.ctx, w.c, w.typed(cur))
			}
			if ok, reason := ready(cur); !ok {
				pending = append(pending, cur)
				why[describe(cr)] = reason
			}
		}
		if len(pending) == 0 {
			return nil
		}
		var errs []error
		for _, cr := range pending {
			passes := w.passesSince(client.ObjectKeyFromObject(cr), since)
			timedOut := time.Now().After(deadline)
			if !timedOut && len(passes) <= w.opts.MaxPasses {
				continue
			}
			errs = append(errs, w.notConverged(cr, why[describe(cr)], passes, timedOut, makeReadyErr[describe(cr)]))
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		if drive != nil && round%5 == 0 {
			for _, cr := range pending {
				w.pass(drive, cr)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// notConverged describes a CR that did not become Ready.
func (w *world) notConverged(cr *unstructured.Unstructured, why string, passes []*pass, timedOut bool, makeReadyErr error) *Violation {
	var b strings.Builder
	if timedOut {
		fmt.Fprintf(&b, "not Ready within %s (%d passes): %s", w.opts.Timeout, len(passes), why)
	} else {
		fmt.Fprintf(&b, "not Ready after %d passes (Options.MaxPasses %d): %s", len(passes), w.opts.MaxPasses, why)
	}
	conds, _ := conditionsOf(cr)
	fmt.Fprintf(&b, "; conditions:\n%s", testenv.DescribeConditions(cr.GetGeneration(), conds))
	for i := len(passes) - 1; i >= 0; i-- {
		if _, err, done := passes[i].outcome(); done && err != nil {
			fmt.Fprintf(&b, "\nthe last failing pass returned: %v", err)
			break
		}
	}
	if makeReadyErr != nil {
		fmt.Fprintf(&b, "\nOptions.MakeReady last returned: %v", makeReadyErr)
	}
	if len(passes) == 0 {
		b.WriteString("\nno pass ran for it: does the controller watch this kind in this namespace?")
	}
	return w.violation(describe(cr), "status.conditions[Ready]",
		"a CR whose dependencies are ready must be Current as kstatus reads it (status.observedGeneration current, "+
			"if the CR has it; no Reconciling or Stalled condition True) and reach Ready=True with observedGeneration = "+
			"metadata.generation; make the steps that block it succeed, or make Options.MakeReady play the dependency "+
			"that is missing", "%s", b.String())
}

// describe renders obj as "Kind namespace/name".
func describe(obj client.Object) string {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		kind = fmt.Sprintf("%T", obj)
	}
	if obj.GetNamespace() == "" {
		return kind + " " + obj.GetName()
	}
	return kind + " " + obj.GetNamespace() + "/" + obj.GetName()
}

// ignoreNotFound returns nil for a NotFound error.
func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
