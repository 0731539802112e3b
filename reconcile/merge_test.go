package reconcile_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

// laggingWidgets is a cache that lags behind the API server: every read of the widget
// at key returns old, the copy stored before the later writes, as an informer that has
// not yet seen them does. Writes and every other read go to the API server.
type laggingWidgets struct {
	client.WithWatch
	key    types.NamespacedName
	old    *Widget
	served atomic.Int32
}

// Get returns old for the lagging widget, the API server's object otherwise.
func (c *laggingWidgets) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if w, ok := obj.(*Widget); ok && key == c.key {
		*w = *c.old.DeepCopyObject().(*Widget)
		c.served.Add(1)
		return nil
	}
	return c.WithWatch.Get(ctx, key, obj, opts...)
}

var subConditions = []string{"SecretsReady", "ConfigReady", "DeploymentReady"}

// mark sets a condition as a pass would, then re-aggregates Ready.
func mark(w *Widget, typ string, status metav1.ConditionStatus, reason, message string) {
	reconcile.SetCondition(w, typ, status, reason, message)
	reconcile.AggregateReady(w, reconcile.ConditionReady, subConditions)
}

// readStatus is the status every case's pass reads from the lagging cache unless the
// case changes it: Secrets and Deployment ready, the config pending, endpoint "a".
func readStatus(w *Widget) {
	w.Status.Endpoint = "http://a"
	mark(w, "SecretsReady", "True", "SecretsAvailable", "secret key present")
	mark(w, "ConfigReady", "False", "ConfigPending", "waiting for the template")
	mark(w, "DeploymentReady", "True", "DeploymentReady", "all replicas ready")
}

// TestRunPassConflictMergesThreeWays: a pass reads the widget from a cache that lags
// behind a newer write, so its status write conflicts, and the retry merges three
// ways. Each condition and top-level field the pass changed is written only where the
// stored widget still holds what the pass read; where another writer changed it since,
// the stored value stays and the pass asks to run again (StaleStatusRequeue), without
// an error. Ready is aggregated over the merged conditions.
func TestRunPassConflictMergesThreeWays(t *testing.T) {
	stale := ctrl.Result{RequeueAfter: reconcile.StaleStatusRequeue}
	secrets := cond("SecretsReady", "True", "SecretsAvailable", "secret key present", 1)
	configPending := cond("ConfigReady", "False", "ConfigPending", "waiting for the template", 1)
	configRendered := cond("ConfigReady", "True", "ConfigRendered", "config rendered", 1)
	deployment := cond("DeploymentReady", "True", "DeploymentReady", "all replicas ready", 1)
	readyTrue := cond("Ready", "True", "AllReady", "all 3 sub-conditions are True", 1)
	readyPending := cond("Ready", "False", "ConfigPending", "ConfigReady is False: waiting for the template", 1)
	renderConfig := func(w *Widget) (ctrl.Result, error) {
		reconcile.MarkTrue(w, "ConfigReady", "ConfigRendered", "config rendered")
		return ctrl.Result{}, nil
	}
	relabel := func(w *Widget) bool { // a metadata-only write: the status stays as read
		w.Labels = map[string]string{"touched": "yes"}
		return false
	}

	for name, tc := range map[string]struct {
		read  func(w *Widget)      // the status stored first, the one the lagging cache serves
		newer func(w *Widget) bool // another writer's change after it; true: a status write
		spec  bool                 // the newer write also changes the spec (a new generation)
		pass  func(w *Widget) (ctrl.Result, error)

		want         []metav1.Condition
		wantEndpoint string
		wantPhase    string
		wantRes      ctrl.Result
		wantErr      error
		wantRetried  bool // the error is not terminal: controller-runtime runs the pass again
		wantWrite    bool // the pass's status write went through
	}{
		"a condition another writer changed since the pass read it keeps the newer value": {
			newer: func(w *Widget) bool {
				mark(w, "ConfigReady", "True", "ConfigRendered", "config rendered")
				return true
			},
			pass: func(w *Widget) (ctrl.Result, error) {
				reconcile.MarkFalse(w, "ConfigReady", "ConfigError", "decided from the lagging copy")
				return ctrl.Result{}, nil
			},
			want:         []metav1.Condition{secrets, configRendered, deployment, readyTrue},
			wantEndpoint: "http://a",
			wantRes:      stale,
		},
		"a condition still as the pass read it takes the pass's change": {
			newer:        relabel,
			pass:         renderConfig,
			want:         []metav1.Condition{secrets, configRendered, deployment, readyTrue},
			wantEndpoint: "http://a",
			wantWrite:    true,
		},
		"a condition whose lastTransitionTime alone moved counts as unchanged": {
			newer: func(w *Widget) bool {
				c := meta.FindStatusCondition(w.Status.Conditions, "ConfigReady")
				c.LastTransitionTime = metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
				return true
			},
			pass:         renderConfig,
			want:         []metav1.Condition{secrets, configRendered, deployment, readyTrue},
			wantEndpoint: "http://a",
			wantWrite:    true,
		},
		"another writer's condition of another type is kept next to the pass's": {
			newer: func(w *Widget) bool {
				reconcile.MarkTrue(w, "External", "SetByOthers", "kept")
				return true
			},
			pass: renderConfig,
			want: []metav1.Condition{secrets, configRendered, deployment, readyTrue,
				cond("External", "True", "SetByOthers", "kept", 1)},
			wantEndpoint: "http://a",
			wantWrite:    true,
		},
		"a condition the pass removed that another writer changed since stays": {
			read: func(w *Widget) {
				readStatus(w)
				reconcile.MarkFalse(w, "External", "Old", "as read")
			},
			newer: func(w *Widget) bool {
				reconcile.MarkTrue(w, "External", "SetByOthers", "newer")
				return true
			},
			pass: func(w *Widget) (ctrl.Result, error) {
				meta.RemoveStatusCondition(&w.Status.Conditions, "External")
				return ctrl.Result{}, nil
			},
			want: []metav1.Condition{secrets, configPending, deployment, readyPending,
				cond("External", "True", "SetByOthers", "newer", 1)},
			wantEndpoint: "http://a",
			wantRes:      stale,
		},
		"a condition the pass removed, unchanged since, is removed": {
			read: func(w *Widget) {
				readStatus(w)
				reconcile.MarkFalse(w, "External", "Old", "as read")
			},
			newer: relabel,
			pass: func(w *Widget) (ctrl.Result, error) {
				meta.RemoveStatusCondition(&w.Status.Conditions, "External")
				return ctrl.Result{}, nil
			},
			want:         []metav1.Condition{secrets, configPending, deployment, readyPending},
			wantEndpoint: "http://a",
			wantWrite:    true,
		},
		"a field another writer changed since the pass read it keeps the newer value": {
			newer: func(w *Widget) bool {
				w.Status.Endpoint = "http://b"
				return true
			},
			pass: func(w *Widget) (ctrl.Result, error) {
				w.Status.Endpoint = "http://c"
				return ctrl.Result{}, nil
			},
			want:         []metav1.Condition{secrets, configPending, deployment, readyPending},
			wantEndpoint: "http://b",
			wantRes:      stale,
		},
		"a field the pass cleared that another writer changed since stays": {
			newer: func(w *Widget) bool {
				w.Status.Endpoint = "http://b"
				return true
			},
			pass: func(w *Widget) (ctrl.Result, error) {
				w.Status.Endpoint = ""
				return ctrl.Result{}, nil
			},
			want:         []metav1.Condition{secrets, configPending, deployment, readyPending},
			wantEndpoint: "http://b",
			wantRes:      stale,
		},
		"a field still as the pass read it takes the pass's change": {
			newer: relabel,
			pass: func(w *Widget) (ctrl.Result, error) {
				w.Status.Endpoint = "http://c"
				return ctrl.Result{}, nil
			},
			want:         []metav1.Condition{secrets, configPending, deployment, readyPending},
			wantEndpoint: "http://c",
			wantWrite:    true,
		},
		"another writer's other field is kept next to the pass's": {
			newer: func(w *Widget) bool {
				w.Status.Phase = "Running"
				return true
			},
			pass: func(w *Widget) (ctrl.Result, error) {
				w.Status.Endpoint = "http://c"
				return ctrl.Result{}, nil
			},
			want:         []metav1.Condition{secrets, configPending, deployment, readyPending},
			wantEndpoint: "http://c",
			wantPhase:    "Running",
			wantWrite:    true,
		},
		"a change equal to the newer value is no conflict": {
			newer: func(w *Widget) bool {
				mark(w, "ConfigReady", "True", "ConfigRendered", "config rendered")
				w.Status.Endpoint = "http://c"
				return true
			},
			pass: func(w *Widget) (ctrl.Result, error) {
				w.Status.Endpoint = "http://c"
				return renderConfig(w)
			},
			want:         []metav1.Condition{secrets, configRendered, deployment, readyTrue},
			wantEndpoint: "http://c",
		},
		"the unchanged part of the pass's status is written and the changed part kept": {
			newer: func(w *Widget) bool {
				w.Status.Endpoint = "http://b"
				return true
			},
			pass: func(w *Widget) (ctrl.Result, error) {
				w.Status.Endpoint = "http://c"
				return renderConfig(w)
			},
			want:         []metav1.Condition{secrets, configRendered, deployment, readyTrue},
			wantEndpoint: "http://b",
			wantRes:      stale,
			wantWrite:    true,
		},
		"Ready is aggregated over the merged conditions": {
			read: func(w *Widget) {
				readStatus(w)
				mark(w, "SecretsReady", "False", "WaitingForSecret", "secret missing")
			},
			newer: func(w *Widget) bool {
				mark(w, "SecretsReady", "True", "SecretsAvailable", "secret key present")
				return true
			},
			pass: func(w *Widget) (ctrl.Result, error) {
				reconcile.MarkFalse(w, "SecretsReady", "SecretDeleted", "decided from the lagging copy")
				return renderConfig(w)
			},
			want:         []metav1.Condition{secrets, configRendered, deployment, readyTrue},
			wantEndpoint: "http://a",
			wantRes:      stale,
			wantWrite:    true,
		},
		"a newer generation's status is not written": {
			newer:        relabel,
			spec:         true,
			pass:         renderConfig,
			want:         []metav1.Condition{secrets, configPending, deployment, readyPending},
			wantEndpoint: "http://a",
		},
		"the pass's later requeue gives way to the stale one": {
			newer: func(w *Widget) bool {
				w.Status.Endpoint = "http://b"
				return true
			},
			pass: func(w *Widget) (ctrl.Result, error) {
				w.Status.Endpoint = "http://c"
				return ctrl.Result{RequeueAfter: time.Minute}, nil
			},
			want:         []metav1.Condition{secrets, configPending, deployment, readyPending},
			wantEndpoint: "http://b",
			wantRes:      stale,
		},
		"the pass's sooner requeue stays": {
			newer: func(w *Widget) bool {
				w.Status.Endpoint = "http://b"
				return true
			},
			pass: func(w *Widget) (ctrl.Result, error) {
				w.Status.Endpoint = "http://c"
				return ctrl.Result{RequeueAfter: time.Millisecond}, nil
			},
			want:         []metav1.Condition{secrets, configPending, deployment, readyPending},
			wantEndpoint: "http://b",
			wantRes:      ctrl.Result{RequeueAfter: time.Millisecond},
		},
		"the pass's error is returned alone": {
			newer: func(w *Widget) bool {
				w.Status.Endpoint = "http://b"
				return true
			},
			pass: func(w *Widget) (ctrl.Result, error) {
				w.Status.Endpoint = "http://c"
				return ctrl.Result{}, errConfig
			},
			want:         []metav1.Condition{secrets, configPending, deployment, readyPending},
			wantEndpoint: "http://b",
			wantErr:      errConfig,
		},
		"a terminal error is retried when a change was kept back": {
			newer: func(w *Widget) bool {
				w.Status.Endpoint = "http://b"
				return true
			},
			pass: func(w *Widget) (ctrl.Result, error) {
				w.Status.Endpoint = "http://c"
				return ctrl.Result{}, crreconcile.TerminalError(errConfig)
			},
			want:         []metav1.Condition{secrets, configPending, deployment, readyPending},
			wantEndpoint: "http://b",
			wantErr:      reconcile.ErrStatusSuperseded,
			wantRetried:  true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			key := createWidget(t, env.Namespace(t))
			w := getWidget(t, key)
			read := tc.read
			if read == nil {
				read = readStatus
			}
			read(w)
			if err := env.Client.Status().Update(ctx, w); err != nil {
				t.Fatalf("store the status the pass reads: %v", err)
			}
			old := getWidget(t, key)

			w = getWidget(t, key)
			if tc.newer(w) {
				if err := env.Client.Status().Update(ctx, w); err != nil {
					t.Fatalf("the newer status write: %v", err)
				}
				w = getWidget(t, key)
			}
			if tc.spec {
				w.Spec.Replicas++
			}
			if err := env.Client.Update(ctx, w); err != nil {
				t.Fatalf("the newer write: %v", err)
			}
			stored := getWidget(t, key)
			if stored.ResourceVersion == old.ResourceVersion {
				t.Fatal("the newer write did not move the resourceVersion")
			}

			lag := &laggingWidgets{WithWatch: withWatch(t), key: key, old: old}
			var statusWrites atomic.Int32
			c := interceptor.NewClient(lag, interceptor.Funcs{
				SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					statusWrites.Add(1)
					return c.SubResource(sub).Update(ctx, obj, opts...)
				},
			})
			opts := reconcile.DefaultPassOptions(subConditions...)
			opts.APIReader = env.Client
			res, err := reconcile.RunPass(ctx, c, key, &Widget{}, opts, func(_ context.Context, w *Widget) (ctrl.Result, error) {
				return tc.pass(w)
			})
			if lag.served.Load() == 0 {
				t.Fatal("the pass did not read the lagging copy")
			}
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("RunPass error = %v, want %v", err, tc.wantErr)
			}
			if tc.wantRetried && (reconcile.IsTerminal(err) || !errors.Is(err, errConfig)) {
				t.Errorf("RunPass error = %v: want the pass's error, not terminal", err)
			}
			if res != tc.wantRes {
				t.Errorf("RunPass result = %+v, want %+v", res, tc.wantRes)
			}
			if statusWrites.Load() == 0 {
				t.Error("the pass wrote no status: its change from the lagging copy never conflicted")
			}
			got := getWidget(t, key)
			assertConditions(t, got, tc.want...)
			if got.Status.Endpoint != tc.wantEndpoint || got.Status.Phase != tc.wantPhase {
				t.Errorf("stored endpoint %q, phase %q; want %q, %q", got.Status.Endpoint, got.Status.Phase, tc.wantEndpoint, tc.wantPhase)
			}
			if wrote := got.ResourceVersion != stored.ResourceVersion; wrote != tc.wantWrite {
				t.Errorf("status written after the conflict: %v, want %v", wrote, tc.wantWrite)
			}
		})
	}
}

// TestRunPassConflictReReadFails: the Get that re-reads the widget after the 409 fails;
// the pass reports that error, naming the widget, and no result.
func TestRunPassConflictReReadFails(t *testing.T) {
	ctx := context.Background()
	key := createWidget(t, env.Namespace(t))
	old := getWidget(t, key)
	w := getWidget(t, key)
	w.Status.Endpoint = "http://b"
	if err := env.Client.Status().Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	errGet := errors.New("injected: the re-read's connection was reset")
	var reReads atomic.Int32
	reader := interceptor.NewClient(withWatch(t), interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			reReads.Add(1)
			return errGet
		},
	})
	opts := reconcile.DefaultPassOptions(subConditions...)
	opts.APIReader = reader
	lag := &laggingWidgets{WithWatch: withWatch(t), key: key, old: old}
	res, err := reconcile.RunPass(ctx, lag, key, &Widget{}, opts, func(_ context.Context, w *Widget) (ctrl.Result, error) {
		w.Status.Endpoint = "http://c"
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	})
	if !errors.Is(err, errGet) || !res.IsZero() || !strings.Contains(err.Error(), "Widget "+key.String()) {
		t.Fatalf("RunPass = %+v, %v; want the re-read's error naming the widget, and no result", res, err)
	}
	if n := reReads.Load(); n != 1 {
		t.Errorf("re-reads = %d, want 1 (a failed read is not a conflict to retry)", n)
	}
	if got := getWidget(t, key); got.Status.Endpoint != "http://b" {
		t.Errorf("stored endpoint %q, want the newer http://b", got.Status.Endpoint)
	}
}
