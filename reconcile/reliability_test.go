package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

// endingContext ends when end is called, with the error given: a pass's deadline or a
// manager's shutdown at a known point of the pass, without waiting for a clock.
type endingContext struct {
	context.Context
	done chan struct{}
	mu   sync.Mutex
	err  error
}

func newEndingContext() *endingContext {
	return &endingContext{Context: context.Background(), done: make(chan struct{})}
}

func (c *endingContext) Done() <-chan struct{} { return c.done }

func (c *endingContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *endingContext) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
		close(c.done)
	}
}

// TestRunPassWritesStatusAfterThePassContextEnds: the pass's context ends mid-pass (its
// deadline passes, or the manager shuts down); the status the pass set is still written,
// with a context of its own that is bounded.
func TestRunPassWritesStatusAfterThePassContextEnds(t *testing.T) {
	for name, cause := range map[string]error{"deadline": context.DeadlineExceeded, "shutdown": context.Canceled} {
		t.Run(name, func(t *testing.T) {
			key := createWidget(t, env.Namespace(t))
			var writeCtxErr error
			var writeDeadline time.Duration
			c := interceptor.NewClient(withWatch(t), interceptor.Funcs{
				SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					writeCtxErr = ctx.Err()
					if dl, ok := ctx.Deadline(); ok {
						writeDeadline = time.Until(dl)
					}
					return c.SubResource(sub).Update(ctx, obj, opts...)
				},
			})
			ctx := newEndingContext()
			opts := reconcile.DefaultPassOptions("SecretsReady", "ConfigReady")
			res, err := reconcile.RunPass(ctx, c, key, &Widget{}, opts, func(ctx context.Context, w *Widget) (ctrl.Result, error) {
				reconcile.MarkTrue(w, "SecretsReady", "SecretsAvailable", "secret key present")
				ctx.(*endingContext).end(cause) // the next step would have to wait
				reconcile.MarkFalse(w, "ConfigReady", "ConfigPending", "rendering was cut short")
				return ctrl.Result{}, fmt.Errorf("render config: %w", ctx.Err())
			})
			if !errors.Is(err, cause) || !res.IsZero() {
				t.Fatalf("pass = %+v, %v; want the pass's own error", res, err)
			}
			if writeCtxErr != nil {
				t.Errorf("status written with an ended context: %v", writeCtxErr)
			}
			if writeDeadline <= 0 || writeDeadline > reconcile.StatusWriteTimeout {
				t.Errorf("status write context has %v left, want a deadline within StatusWriteTimeout (%v)", writeDeadline, reconcile.StatusWriteTimeout)
			}
			assertConditions(t, getWidget(t, key),
				cond("SecretsReady", "True", "SecretsAvailable", "secret key present", 1),
				cond("ConfigReady", "False", "ConfigPending", "rendering was cut short", 1),
				cond("Ready", "False", "ConfigPending", "ConfigReady is False: rendering was cut short", 1),
			)
		})
	}
}

// TestRunPassStatusWriteTimeoutOption: PassOptions.StatusWriteTimeout bounds the write.
func TestRunPassStatusWriteTimeoutOption(t *testing.T) {
	key := createWidget(t, env.Namespace(t))
	var left time.Duration
	c := interceptor.NewClient(withWatch(t), interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if dl, ok := ctx.Deadline(); ok {
				left = time.Until(dl)
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	})
	opts := reconcile.DefaultPassOptions("SecretsReady")
	opts.StatusWriteTimeout = time.Minute + 30*time.Second
	_, err := reconcile.RunPass(context.Background(), c, key, &Widget{}, opts, func(_ context.Context, w *Widget) (ctrl.Result, error) {
		reconcile.MarkTrue(w, "SecretsReady", "SecretsAvailable", "")
		return ctrl.Result{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if left <= reconcile.StatusWriteTimeout || left > opts.StatusWriteTimeout {
		t.Errorf("status write context has %v left, want more than the default %v and at most %v", left, reconcile.StatusWriteTimeout, opts.StatusWriteTimeout)
	}
}

// TestRunPassDeletionThroughManagerCache: RunPass on a manager's cached client. The
// cache is held stale (its informer's next event for the widget waits) while the pass
// runs, so the read that follows the status write's 404 would see the object still
// there; the pass must still end without ErrStatusNotServed.
func TestRunPassDeletionThroughManagerCache(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		finalizer bool // the pass removes the last finalizer; otherwise someone deletes it
		apiReader bool
	}{
		"last finalizer removed":                   {finalizer: true},
		"last finalizer removed, with APIReader":   {finalizer: true, apiReader: true},
		"deleted by another party":                 {},
		"deleted by another party, with APIReader": {apiReader: true},
	} {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			gate := newCacheGate()
			mgr := startManager(t, ns, gate.transform, nil)
			t.Cleanup(gate.open) // runs before the manager stops
			c := mgr.GetClient()
			key := createWidget(t, ns)
			r := newWidgetReconciler(t, c)
			if tc.apiReader {
				r.opts.APIReader = mgr.GetAPIReader()
			}
			var statusWrites []error
			r.client = interceptor.NewClient(noWatchClient{c}, interceptor.Funcs{
				SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					err := c.SubResource(sub).Update(ctx, obj, opts...)
					statusWrites = append(statusWrites, err)
					return err
				},
			})
			pass := r.pass
			if tc.finalizer {
				if _, err := r.Reconcile(ctx, key); err != nil {
					t.Fatalf("first pass: %v", err)
				}
				if err := env.Client.Delete(ctx, getWidget(t, key)); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the cache to see the deletion", func() bool {
					w := &Widget{}
					return c.Get(ctx, key, w) == nil && !w.DeletionTimestamp.IsZero()
				})
				r.cleanup = func(w *Widget) (bool, error) {
					reconcile.MarkTrue(w, "CleanupReady", "CleanupDone", "remote children removed")
					return true, nil
				}
			} else {
				waitFor(t, "the cache to see the widget", func() bool { return c.Get(ctx, key, &Widget{}) == nil })
				pass = func(ctx context.Context, w *Widget) (ctrl.Result, error) {
					reconcile.MarkTrue(w, "SecretsReady", "SecretsAvailable", "secret key present")
					if err := env.Client.Delete(ctx, w.DeepCopyObject().(*Widget)); err != nil {
						return ctrl.Result{}, err
					}
					return ctrl.Result{}, nil
				}
			}
			statusWrites = nil
			gate.arm(key)
			res, err := reconcile.RunPass(ctx, r.client, key, &Widget{}, r.opts, pass)
			if err != nil || !res.IsZero() {
				t.Fatalf("pass = %+v, %v; want no error for the deleted widget", res, err)
			}
			if len(statusWrites) != 1 || !apierrors.IsNotFound(statusWrites[0]) {
				t.Errorf("status writes returned %v, want one 404", statusWrites)
			}
			if err := env.Client.Get(ctx, key, &Widget{}); !apierrors.IsNotFound(err) {
				t.Errorf("widget still there: %v", err)
			}
			// The cache was stale throughout: it still holds the widget.
			w := &Widget{}
			if err := c.Get(ctx, key, w); err != nil {
				t.Errorf("the gate let the cache move on (%v): the test proved nothing", err)
			} else if tc.finalizer && !controllerutil.ContainsFinalizer(w, widgetFinalizer) {
				t.Error("the gate let the cache see the finalizer removal: the test proved nothing")
			}
		})
	}
}

// noWatchClient lets a manager's client be wrapped by interceptor.NewClient.
type noWatchClient struct{ client.Client }

func (noWatchClient) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errors.New("no watch")
}

// TestRunPassWritesStatusDespiteInvalidConditions: a condition the API server would
// refuse (an invalid reason, set through SetCondition or around it, or a message over
// the API's limit) does not make the status write fail: the pass's status is stored.
func TestRunPassWritesStatusDespiteInvalidConditions(t *testing.T) {
	var logged []string
	ctx := log.IntoContext(context.Background(), funcr.New(func(prefix, args string) {
		logged = append(logged, args)
	}, funcr.Options{}))
	key := createWidget(t, env.Namespace(t))
	opts := reconcile.DefaultPassOptions("SecretsReady", "DashboardAPIReady")
	res, err := reconcile.RunPass(ctx, env.Client, key, &Widget{}, opts, func(_ context.Context, w *Widget) (ctrl.Result, error) {
		reconcile.MarkFalse(w, "SecretsReady", "Store not ready", "waiting for the store")
		// A condition set without SetCondition, as an operator might from a probe.
		meta.SetStatusCondition(w.Conditions(), metav1.Condition{Type: "DashboardAPIReady", Status: metav1.ConditionFalse,
			Reason: "HTTP 502 Bad Gateway", Message: strings.Repeat("m", 40000), ObservedGeneration: w.Generation})
		return ctrl.Result{RequeueAfter: reconcile.RetryInterval}, nil
	})
	if err != nil || res.RequeueAfter != reconcile.RetryInterval {
		t.Fatalf("pass = %+v, %v; want its requeue and the status written", res, err)
	}
	w := getWidget(t, key)
	for _, typ := range []string{"SecretsReady", "DashboardAPIReady", "Ready"} {
		c := meta.FindStatusCondition(w.Status.Conditions, typ)
		switch {
		case c == nil:
			t.Errorf("%s not stored", typ)
		case c.Reason != reconcile.ReasonInvalidReason || c.Status != metav1.ConditionFalse:
			t.Errorf("%s = %s/%s, want False/%s", typ, c.Status, c.Reason, reconcile.ReasonInvalidReason)
		case len(c.Message) > 32768:
			t.Errorf("%s message of %d bytes stored", typ, len(c.Message))
		}
	}
	// Loudly: each repaired condition is logged as an error.
	for _, typ := range []string{"SecretsReady", "DashboardAPIReady", "Ready"} {
		found := false
		for _, l := range logged {
			found = found || strings.Contains(l, `"conditionType"="`+typ+`"`) && strings.Contains(l, "invalid condition reason")
		}
		if !found {
			t.Errorf("no error logged for %s; logged:\n%s", typ, strings.Join(logged, "\n"))
		}
	}
}

// TestRunPassStalePassDoesNotOverwriteANewerOne: two reconcilers (a leader-election
// overlap). B reads the widget at generation 1 and, while its pass runs, the spec
// changes and A converges generation 2. B's status write then conflicts; B must not
// reapply its view of generation 1 over A's, which would flip DeploymentReady and Ready
// back to False until the next pass.
func TestRunPassStalePassDoesNotOverwriteANewerOne(t *testing.T) {
	ctx := context.Background()
	key := createWidget(t, env.Namespace(t))
	a := newWidgetReconciler(t, env.Client)
	if _, err := a.Reconcile(ctx, key); err != nil {
		t.Fatal(err)
	}
	pinned := pinLTT(t, key)

	b := newWidgetReconciler(t, env.Client)
	b.deployment = func(w *Widget) (ctrl.Result, error) {
		// Meanwhile: the spec changes and A converges the new generation.
		fresh := getWidget(t, key)
		fresh.Spec.Replicas = 2
		if err := env.Client.Update(ctx, fresh); err != nil {
			t.Fatalf("spec change: %v", err)
		}
		if res, err := a.Reconcile(ctx, key); err != nil || !res.IsZero() {
			t.Fatalf("A's pass = %+v, %v", res, err)
		}
		// B saw the old generation's rollout in progress.
		reconcile.MarkFalse(w, "DeploymentReady", "WaitingForDeployment", "0/1 replicas updated")
		return ctrl.Result{RequeueAfter: reconcile.DeploymentPollInterval}, nil
	}
	res, err := b.Reconcile(ctx, key)
	if err != nil || res.RequeueAfter != reconcile.DeploymentPollInterval {
		t.Fatalf("B's pass = %+v, %v; want its requeue", res, err)
	}
	w := getWidget(t, key)
	assertConditions(t, w, allReadyConditions(2)...)
	assertLTT(t, w, pinned)
}
