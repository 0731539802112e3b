package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// writingPass is a small operator whose pass writes: the finalizer, then two steps that
// each create a ConfigMap the widget controls, then (in RunPass) the status. On the
// deletion path it deletes both ConfigMaps and removes the finalizer. hook, when set,
// runs at each point between two writes: "finalizer", "config", "deployment" and
// "cleanup".
func writingPass(t testing.TB, c client.Client, hook func(point string)) reconcile.StepFunc[*Widget] {
	if hook == nil {
		hook = func(string) {}
	}
	p := mustPipeline(t, nil,
		reconcile.Step[*Widget]{Name: "Secrets", Condition: "SecretsReady", Run: func(_ context.Context, w *Widget) (ctrl.Result, error) {
			reconcile.MarkTrue(w, "SecretsReady", "SecretsAvailable", "secret key present")
			return ctrl.Result{}, nil
		}},
		reconcile.Step[*Widget]{Name: "Config", Condition: "ConfigReady", Run: func(ctx context.Context, w *Widget) (ctrl.Result, error) {
			if err := createOwned(ctx, c, w, "-config"); err != nil {
				reconcile.MarkFalse(w, "ConfigReady", "ConfigError", "config map not written")
				return ctrl.Result{}, err
			}
			hook("config")
			reconcile.MarkTrue(w, "ConfigReady", "ConfigRendered", "config rendered")
			return ctrl.Result{}, nil
		}},
		reconcile.Step[*Widget]{Name: "Deployment", Condition: "DeploymentReady", Run: func(ctx context.Context, w *Widget) (ctrl.Result, error) {
			if err := createOwned(ctx, c, w, "-deploy"); err != nil {
				reconcile.MarkFalse(w, "DeploymentReady", "DeploymentError", "deployment not written")
				return ctrl.Result{}, err
			}
			hook("deployment")
			w.Status.Endpoint = "http://" + w.Name + ":8080"
			reconcile.MarkTrue(w, "DeploymentReady", "DeploymentReady", fmt.Sprintf("%d replicas ready", w.Spec.Replicas))
			return ctrl.Result{}, nil
		}},
	)
	return func(ctx context.Context, w *Widget) (ctrl.Result, error) {
		if !w.DeletionTimestamp.IsZero() {
			for _, suffix := range []string{"-config", "-deploy"} {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name + suffix}}
				if err := c.Delete(ctx, cm); client.IgnoreNotFound(err) != nil {
					reconcile.MarkFalse(w, "CleanupReady", "CleanupFailed", "config maps not deleted")
					return ctrl.Result{}, err
				}
			}
			hook("cleanup")
			reconcile.MarkTrue(w, "CleanupReady", "CleanupDone", "config maps deleted")
			_, err := reconcile.RemoveFinalizer(ctx, c, w, widgetFinalizer)
			return ctrl.Result{}, err
		}
		if _, err := reconcile.AddFinalizer(ctx, c, w, widgetFinalizer); err != nil {
			return ctrl.Result{}, err
		}
		hook("finalizer")
		return p.Run(ctx, w)
	}
}

var writingOpts = reconcile.DefaultPassOptions("SecretsReady", "ConfigReady", "DeploymentReady")

// createOwned creates the ConfigMap <widget name><suffix>, controlled by w; one that
// exists already counts as created.
func createOwned(ctx context.Context, c client.Client, w *Widget, suffix string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name + suffix},
		Data: map[string]string{"replicas": fmt.Sprint(w.Spec.Replicas)}}
	if err := controllerutil.SetControllerReference(w, cm, env.Scheme); err != nil {
		return err
	}
	if err := c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create ConfigMap %s: %w", client.ObjectKeyFromObject(cm), err)
	}
	return nil
}

// widgetState is what a converged writing pass leaves, without what differs between
// runs (namespace, UIDs, timestamps).
type widgetState struct {
	Exists     bool
	Finalizers []string
	Endpoint   string
	Conditions []metav1.Condition
	ConfigMaps []string
}

func stateOf(t *testing.T, key types.NamespacedName) widgetState {
	t.Helper()
	var s widgetState
	w := &Widget{}
	switch err := env.Client.Get(context.Background(), key, w); {
	case err == nil:
		s.Exists, s.Finalizers, s.Endpoint = true, w.Finalizers, w.Status.Endpoint
		for _, c := range w.Status.Conditions {
			c.LastTransitionTime = metav1.Time{}
			s.Conditions = append(s.Conditions, c)
		}
		slices.SortFunc(s.Conditions, func(a, b metav1.Condition) int { return strings.Compare(a.Type, b.Type) })
	case !apierrors.IsNotFound(err):
		t.Fatalf("get widget: %v", err)
	}
	for _, suffix := range []string{"-config", "-deploy"} {
		err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: key.Namespace, Name: key.Name + suffix}, &corev1.ConfigMap{})
		switch {
		case err == nil:
			s.ConfigMaps = append(s.ConfigMaps, suffix)
		case !apierrors.IsNotFound(err):
			t.Fatalf("get config map: %v", err)
		}
	}
	return s
}

// lastPass is what the fault matrix's Check needs to know about the pass just run.
type lastPass struct {
	ran           bool    // the pass function ran (the first Get succeeded)
	statusFaulted bool    // a status write met the injected fault
	view          *Widget // the pass's view of the widget after RunPass
}

// matrixRun builds a FaultRun for the writing pass on the widget at key. Check: when the
// pass ran and its status write did not meet the fault, the stored status is the pass's
// view — on every exit path, the failed ones included.
func matrixRun(t *testing.T, key types.NamespacedName) faults.Scenario {
	var last lastPass
	return faults.Scenario{
		Client: env.Client,
		Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
			last = lastPass{}
			cc := interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
				SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					err := c.SubResource(sub).Update(ctx, obj, opts...)
					if testenvInjected(err) {
						last.statusFaulted = true
					}
					return err
				},
			})
			w := &Widget{}
			pass := writingPass(t, cc, nil)
			res, err := reconcile.RunPass(ctx, cc, key, w, writingOpts, func(ctx context.Context, w *Widget) (ctrl.Result, error) {
				last.ran = true
				return pass(ctx, w)
			})
			last.view = w
			return res, err
		},
		Check: func(t *testing.T) {
			t.Helper()
			if !last.ran || last.statusFaulted {
				return
			}
			stored := &Widget{}
			if err := env.Client.Get(context.Background(), key, stored); apierrors.IsNotFound(err) {
				return
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(last.view.Status.Conditions, stored.Status.Conditions, ignoreLTT, sortConds, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("stored conditions differ from the pass's (-pass +stored):\n%s", diff)
			}
			if stored.Status.Endpoint != last.view.Status.Endpoint {
				t.Errorf("stored endpoint %q, the pass set %q", stored.Status.Endpoint, last.view.Status.Endpoint)
			}
		},
		State: func(t *testing.T) any { return stateOf(t, key) },
	}
}

func testenvInjected(err error) bool { return errors.Is(err, faults.ErrInjected) }

// TestRunPassFaultMatrix fails every API call of a pass, one at a time, with a 409, a
// 500, a timeout and a cancelled context: the pass reports it, its status is written
// whenever the status write was not the failed call, and the next passes converge to
// what a run without faults leaves.
func TestRunPassFaultMatrix(t *testing.T) {
	t.Run("create", func(t *testing.T) {
		faults.Matrix{
			Setup:     func(t *testing.T) faults.Scenario { return matrixRun(t, createWidget(t, env.Namespace(t))) },
			MaxPasses: 3,
		}.Run(t)
	})
	t.Run("delete", func(t *testing.T) {
		faults.Matrix{
			Setup: func(t *testing.T) faults.Scenario {
				key := createWidget(t, env.Namespace(t))
				if res, err := reconcile.RunPass(context.Background(), env.Client, key, &Widget{}, writingOpts, writingPass(t, env.Client, nil)); err != nil || !res.IsZero() {
					t.Fatalf("converge before the deletion: %+v, %v", res, err)
				}
				if err := env.Client.Delete(context.Background(), getWidget(t, key)); err != nil {
					t.Fatal(err)
				}
				return matrixRun(t, key)
			},
			MaxPasses: 3,
			// A timeout on the status write of a widget that is gone is served first: the
			// write answers 404 and the pass rightly ends without an error.
			MayAbsorb: func(v faults.Verb, f faults.Fault) bool {
				return f.Name == faults.Conflict.Name || (v == faults.VerbStatusUpdate && f.Name == faults.Timeout.Name)
			},
		}.Run(t)
	})
}

// TestRunPassKilledMidPass stops a pass between two of its writes — the process dies:
// nothing after that point runs, the status write included — and checks that the next
// pass converges to the state of a pass never interrupted.
func TestRunPassKilledMidPass(t *testing.T) {
	ctx := context.Background()
	converged := func(t *testing.T, key types.NamespacedName) {
		t.Helper()
		for pass := 1; ; pass++ {
			res, err := reconcile.RunPass(ctx, env.Client, key, &Widget{}, writingOpts, writingPass(t, env.Client, nil))
			if err == nil && res.IsZero() {
				return
			}
			if pass == 3 {
				t.Fatalf("no convergence after %d passes: %+v, %v", pass, res, err)
			}
		}
	}
	// The reference: a widget whose passes were never interrupted.
	ref := createWidget(t, env.Namespace(t))
	converged(t, ref)
	want := stateOf(t, ref)

	for _, point := range []string{"finalizer", "config", "deployment", "cleanup"} {
		t.Run("after "+point, func(t *testing.T) {
			key := createWidget(t, env.Namespace(t))
			wantNow := want
			if point == "cleanup" {
				converged(t, key)
				if err := env.Client.Delete(ctx, getWidget(t, key)); err != nil {
					t.Fatal(err)
				}
				wantNow = widgetState{}
			}
			before := getWidget(t, key)
			killed := make(chan bool)
			go func() {
				reached := false
				defer func() { killed <- reached }()
				_, _ = reconcile.RunPass(ctx, env.Client, key, &Widget{}, writingOpts, writingPass(t, env.Client, func(p string) {
					if p == point {
						reached = true
						runtime.Goexit()
					}
				}))
			}()
			if !<-killed {
				t.Fatalf("the pass never reached %q", point)
			}
			// The kill left the status unwritten.
			if after := getWidget(t, key); !cmp.Equal(before.Status, after.Status) {
				t.Fatalf("the status was written although the pass was killed: %+v", after.Status)
			}
			converged(t, key)
			if diff := cmp.Diff(wantNow, stateOf(t, key)); diff != "" {
				t.Errorf("state after the killed pass and the next (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunPassTwoManagersDoNotFlap: two managers reconcile the same widget at once, each
// through its own cache (a leader-election overlap), while its spec changes. Every
// stored version of the widget is recorded through a watch: once a condition is True it
// stays True, and its lastTransitionTime never moves.
func TestRunPassTwoManagersDoNotFlap(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	key := createWidget(t, ns)

	wc := withWatch(t)
	wi, err := wc.Watch(ctx, &WidgetList{}, client.InNamespace(ns),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", key.Name)})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		history []*Widget
	)
	recorded := make(chan struct{})
	go func() {
		defer close(recorded)
		for ev := range wi.ResultChan() {
			if w, ok := ev.Object.(*Widget); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
				mu.Lock()
				history = append(history, w)
				mu.Unlock()
			}
		}
	}()

	var reconcilers []func() (ctrl.Result, error)
	for i := range 2 {
		mgr := startManager(t, ns, nil, nil)
		c := mgr.GetClient()
		opts := writingOpts
		if i == 0 {
			opts.APIReader = mgr.GetAPIReader() // the other one re-reads through its cache
		}
		reconcilers = append(reconcilers, func() (ctrl.Result, error) {
			return reconcile.RunPass(ctx, c, key, &Widget{}, opts, writingPass(t, c, nil))
		})
	}
	both := func() {
		var wg sync.WaitGroup
		for _, r := range reconcilers {
			wg.Go(func() {
				if _, err := r(); err != nil && !apierrors.IsConflict(err) {
					t.Errorf("pass: %v", err)
				}
			})
		}
		wg.Wait()
	}
	for round := range 12 {
		if round%3 == 1 {
			var wg sync.WaitGroup
			wg.Go(func() {
				w := getWidget(t, key)
				w.Spec.Replicas++
				if err := env.Client.Update(ctx, w); err != nil && !apierrors.IsConflict(err) {
					t.Errorf("spec change: %v", err)
				}
			})
			both()
			wg.Wait()
			continue
		}
		both()
	}
	// Let both converge on the last generation (their caches catch up meanwhile).
	waitFor(t, "both managers to converge", func() bool {
		both()
		w := getWidget(t, key)
		for _, c := range w.Status.Conditions {
			if c.ObservedGeneration != w.Generation || c.Status != metav1.ConditionTrue {
				return false
			}
		}
		return len(w.Status.Conditions) == 4
	})
	final := getWidget(t, key)
	waitFor(t, "the watch to deliver the last version", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(history) > 0 && history[len(history)-1].ResourceVersion == final.ResourceVersion
	})
	wi.Stop()
	<-recorded

	firstTrue := map[string]metav1.Condition{}
	for _, w := range history {
		for _, c := range w.Status.Conditions {
			first, seen := firstTrue[c.Type]
			switch {
			case !seen && c.Status == metav1.ConditionTrue:
				firstTrue[c.Type] = c
			case seen && c.Status != metav1.ConditionTrue:
				t.Errorf("resourceVersion %s (generation %d): %s flapped back to %s/%s: %s", w.ResourceVersion, w.Generation, c.Type, c.Status, c.Reason, c.Message)
			case seen && !c.LastTransitionTime.Equal(&first.LastTransitionTime):
				t.Errorf("resourceVersion %s: %s lastTransitionTime moved from %v to %v", w.ResourceVersion, c.Type, first.LastTransitionTime, c.LastTransitionTime)
			}
		}
	}
	if len(firstTrue) != 4 {
		t.Errorf("conditions that became True: %v, want 4", firstTrue)
	}
	t.Logf("%d stored versions over generations 1..%d", len(history), final.Generation)
}
