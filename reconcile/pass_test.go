package reconcile_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

const widgetFinalizer = "reconcile.test.c5c3.io/cleanup"

var errConfig = errors.New("render config: template error")

// widgetReconciler is the operator the persistence tests drive: a preamble with a
// finalizer and a deletion path, then a three-step pipeline. Each hook may be replaced.
type widgetReconciler struct {
	client   client.Client
	opts     reconcile.PassOptions
	pipeline *reconcile.Pipeline[*Widget]

	config     func(w *Widget) (ctrl.Result, error)
	deployment func(w *Widget) (ctrl.Result, error)
	cleanup    func(w *Widget) (done bool, err error)
}

func newWidgetReconciler(t testing.TB, c client.Client) *widgetReconciler {
	t.Helper()
	r := &widgetReconciler{
		client: c,
		config: func(w *Widget) (ctrl.Result, error) {
			reconcile.MarkTrue(w, "ConfigReady", "ConfigRendered", "config rendered")
			return ctrl.Result{}, nil
		},
		deployment: func(w *Widget) (ctrl.Result, error) {
			w.Status.Endpoint = "http://" + w.Name + ":8080"
			reconcile.MarkTrue(w, "DeploymentReady", "DeploymentReady", "all replicas ready")
			return ctrl.Result{}, nil
		},
		cleanup: func(*Widget) (bool, error) { return true, nil },
	}
	r.pipeline = mustPipeline(t, nil,
		reconcile.Step[*Widget]{Name: "Secrets", Condition: "SecretsReady", Run: func(_ context.Context, w *Widget) (ctrl.Result, error) {
			reconcile.MarkTrue(w, "SecretsReady", "SecretsAvailable", "secret key present")
			return ctrl.Result{}, nil
		}},
		reconcile.Step[*Widget]{Name: "Config", Condition: "ConfigReady", Run: func(_ context.Context, w *Widget) (ctrl.Result, error) { return r.config(w) }},
		reconcile.Step[*Widget]{Name: "Deployment", Condition: "DeploymentReady", Run: func(_ context.Context, w *Widget) (ctrl.Result, error) { return r.deployment(w) }},
	)
	r.opts = reconcile.DefaultPassOptions(r.pipeline.Conditions()...)
	return r
}

func (r *widgetReconciler) Reconcile(ctx context.Context, key types.NamespacedName) (ctrl.Result, error) {
	return reconcile.RunPass(ctx, r.client, key, &Widget{}, r.opts, r.pass)
}

func (r *widgetReconciler) pass(ctx context.Context, w *Widget) (ctrl.Result, error) {
	if !w.DeletionTimestamp.IsZero() {
		done, err := r.cleanup(w)
		switch {
		case err != nil:
			reconcile.MarkFalse(w, "CleanupReady", "CleanupFailed", "remote cleanup failed")
			return ctrl.Result{}, err
		case !done:
			reconcile.MarkFalse(w, "CleanupReady", "WaitingForCleanup", "remote children still present")
			return ctrl.Result{RequeueAfter: reconcile.RetryInterval}, nil
		}
		_, err = reconcile.RemoveFinalizer(ctx, r.client, w, widgetFinalizer)
		return ctrl.Result{}, err
	}
	if _, err := reconcile.AddFinalizer(ctx, r.client, w, widgetFinalizer); err != nil {
		return ctrl.Result{}, err
	}
	return r.pipeline.Run(ctx, w)
}

func createWidget(t *testing.T, ns string) types.NamespacedName {
	t.Helper()
	w := &Widget{ObjectMeta: metav1.ObjectMeta{Name: "widget", Namespace: ns}, Spec: WidgetSpec{Replicas: 1}}
	if err := env.Client.Create(context.Background(), w); err != nil {
		t.Fatalf("create widget: %v", err)
	}
	return client.ObjectKeyFromObject(w)
}

func getWidget(t *testing.T, key types.NamespacedName) *Widget {
	t.Helper()
	w := &Widget{}
	if err := env.Client.Get(context.Background(), key, w); err != nil {
		t.Fatalf("get widget: %v", err)
	}
	return w
}

// cond is a condition as the tests expect it, lastTransitionTime aside.
func cond(typ string, status metav1.ConditionStatus, reason, message string, gen int64) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: gen}
}

var sortConds = cmpopts.SortSlices(func(a, b metav1.Condition) bool { return a.Type < b.Type })

func assertConditions(t *testing.T, w *Widget, want ...metav1.Condition) {
	t.Helper()
	if diff := cmp.Diff(want, w.Status.Conditions, ignoreLTT, sortConds, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("stored conditions (-want +got):\n%s", diff)
	}
}

func allReadyConditions(gen int64) []metav1.Condition {
	return []metav1.Condition{
		cond("SecretsReady", "True", "SecretsAvailable", "secret key present", gen),
		cond("ConfigReady", "True", "ConfigRendered", "config rendered", gen),
		cond("DeploymentReady", "True", "DeploymentReady", "all replicas ready", gen),
		cond("Ready", "True", "AllReady", "all 3 sub-conditions are True", gen),
	}
}

func TestRunPassPersistsAndSkipsUnchangedStatus(t *testing.T) {
	ctx := context.Background()
	key := createWidget(t, env.Namespace(t))
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	r := newWidgetReconciler(t, c)

	res, err := r.Reconcile(ctx, key)
	if err != nil || !res.IsZero() {
		t.Fatalf("first pass = %+v, %v", res, err)
	}
	w := getWidget(t, key)
	assertConditions(t, w, allReadyConditions(1)...)
	if w.Status.Endpoint != "http://widget:8080" || !controllerutil.ContainsFinalizer(w, widgetFinalizer) {
		t.Errorf("stored endpoint %q, finalizers %v", w.Status.Endpoint, w.Finalizers)
	}
	pinned := pinLTT(t, key)

	// A converged pass: one GET, no write at all.
	counter.Reset()
	if res, err := r.Reconcile(ctx, key); err != nil || !res.IsZero() {
		t.Fatalf("second pass = %+v, %v", res, err)
	}
	if counter.Writes() != 0 || counter.Method("GET") != 1 {
		t.Errorf("unchanged pass sent %d writes and %d GETs, want 0 and 1", counter.Writes(), counter.Method("GET"))
	}

	// A spec change: every condition is re-stamped with the new generation in one write,
	// and no lastTransitionTime moves because no status flipped.
	w = getWidget(t, key)
	w.Spec.Replicas = 3
	if err := env.Client.Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	counter.Reset()
	if _, err := r.Reconcile(ctx, key); err != nil {
		t.Fatal(err)
	}
	if counter.Method("PUT") != 1 || counter.Writes() != 1 {
		t.Errorf("pass after a spec change sent %d PUTs / %d writes, want 1 status write", counter.Method("PUT"), counter.Writes())
	}
	w = getWidget(t, key)
	assertConditions(t, w, allReadyConditions(2)...)
	assertLTT(t, w, pinned)
}

// pinLTT sets the lastTransitionTime of every stored condition of the widget at key to
// an hour ago, in whole seconds as the API server stores it, and returns that time. A
// later pass that re-stamps a condition it did not flip then shows, even when it runs
// within the same second as the pass that set the condition.
func pinLTT(t *testing.T, key types.NamespacedName) metav1.Time {
	t.Helper()
	w := getWidget(t, key)
	if len(w.Status.Conditions) == 0 {
		t.Fatal("pinLTT: the widget has no conditions")
	}
	pinned := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	for i := range w.Status.Conditions {
		w.Status.Conditions[i].LastTransitionTime = pinned
	}
	if err := env.Client.Status().Update(context.Background(), w); err != nil {
		t.Fatalf("pin lastTransitionTime: %v", err)
	}
	return pinned
}

// assertLTT checks that the conditions of the flipped types carry a lastTransitionTime
// other than pinned and that every other condition kept pinned.
func assertLTT(t *testing.T, w *Widget, pinned metav1.Time, flipped ...string) {
	t.Helper()
	for _, c := range w.Status.Conditions {
		switch moved := !c.LastTransitionTime.Equal(&pinned); {
		case slices.Contains(flipped, c.Type) && !moved:
			t.Errorf("%s flipped to %s but kept its lastTransitionTime %v", c.Type, c.Status, pinned)
		case !slices.Contains(flipped, c.Type) && moved:
			t.Errorf("%s lastTransitionTime moved from %v to %v without a status flip", c.Type, pinned, c.LastTransitionTime)
		}
	}
}

func TestRunPassStepError(t *testing.T) {
	ctx := context.Background()
	key := createWidget(t, env.Namespace(t))
	r := newWidgetReconciler(t, env.Client)
	deploymentRan := false
	r.config = func(w *Widget) (ctrl.Result, error) {
		reconcile.MarkFalse(w, "ConfigReady", "ConfigError", "local_settings.py: template error")
		return ctrl.Result{RequeueAfter: reconcile.RetryInterval}, errConfig // result must be dropped
	}
	r.deployment = func(*Widget) (ctrl.Result, error) { deploymentRan = true; return ctrl.Result{}, nil }

	res, err := r.Reconcile(ctx, key)
	if !errors.Is(err, errConfig) || !res.IsZero() {
		t.Fatalf("pass = %+v, %v; want the config error and no result", res, err)
	}
	if deploymentRan {
		t.Error("the step after the failing one ran")
	}
	assertConditions(t, getWidget(t, key),
		cond("SecretsReady", "True", "SecretsAvailable", "secret key present", 1),
		cond("ConfigReady", "False", "ConfigError", "local_settings.py: template error", 1),
		cond("Ready", "False", "ConfigError", "ConfigReady is False: local_settings.py: template error", 1),
	)
}

func TestRunPassRequeue(t *testing.T) {
	ctx := context.Background()
	key := createWidget(t, env.Namespace(t))
	r := newWidgetReconciler(t, env.Client)
	// Converge first, then let the Deployment fall behind: DeploymentReady flips.
	if _, err := r.Reconcile(ctx, key); err != nil {
		t.Fatal(err)
	}
	pinned := pinLTT(t, key)
	r.deployment = func(w *Widget) (ctrl.Result, error) {
		reconcile.MarkFalse(w, "DeploymentReady", "WaitingForDeployment", "0/1 replicas available")
		return ctrl.Result{RequeueAfter: reconcile.DeploymentPollInterval}, nil
	}
	res, err := r.Reconcile(ctx, key)
	if err != nil || res.RequeueAfter != reconcile.DeploymentPollInterval {
		t.Fatalf("pass = %+v, %v; want RequeueAfter %v", res, err, reconcile.DeploymentPollInterval)
	}
	w := getWidget(t, key)
	assertConditions(t, w,
		cond("SecretsReady", "True", "SecretsAvailable", "secret key present", 1),
		cond("ConfigReady", "True", "ConfigRendered", "config rendered", 1),
		cond("DeploymentReady", "False", "WaitingForDeployment", "0/1 replicas available", 1),
		cond("Ready", "False", "WaitingForDeployment", "DeploymentReady is False: 0/1 replicas available", 1),
	)
	// Only the two conditions that flipped got a new lastTransitionTime.
	assertLTT(t, w, pinned, "DeploymentReady", "Ready")
	if w.Status.Endpoint != "http://widget:8080" {
		t.Errorf("endpoint %q lost", w.Status.Endpoint)
	}
}

func TestRunPassFinalizerError(t *testing.T) {
	ctx := context.Background()
	key := createWidget(t, env.Namespace(t))
	errPatch := apierrors.NewForbidden(schema.GroupResource{Group: widgetGV.Group, Resource: "widgets"}, key.Name, errors.New("no patch"))
	c := interceptor.NewClient(withWatch(t), interceptor.Funcs{
		Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
			return errPatch
		},
	})
	r := newWidgetReconciler(t, c)

	res, err := r.Reconcile(ctx, key)
	if !apierrors.IsForbidden(err) || !res.IsZero() || !strings.Contains(err.Error(), "add finalizer") {
		t.Fatalf("pass = %+v, %v; want the finalizer's Forbidden error", res, err)
	}
	w := getWidget(t, key)
	if len(w.Finalizers) != 0 {
		t.Errorf("finalizers = %v", w.Finalizers)
	}
	// The pipeline never ran, and the stored Ready says so.
	assertConditions(t, w, cond("Ready", "False", "Pending", "SecretsReady has not been reported", 1))
}

func TestRunPassDeletionPath(t *testing.T) {
	ctx := context.Background()
	key := createWidget(t, env.Namespace(t))
	r := newWidgetReconciler(t, env.Client)
	if _, err := r.Reconcile(ctx, key); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, getWidget(t, key)); err != nil {
		t.Fatal(err)
	}
	deletingGen := getWidget(t, key).Generation

	// Cleanup is still waiting: requeue, condition stored, finalizer kept.
	r.cleanup = func(*Widget) (bool, error) { return false, nil }
	res, err := r.Reconcile(ctx, key)
	if err != nil || res.RequeueAfter != reconcile.RetryInterval {
		t.Fatalf("waiting pass = %+v, %v", res, err)
	}
	w := getWidget(t, key)
	if c := meta.FindStatusCondition(w.Status.Conditions, "CleanupReady"); c == nil || c.Reason != "WaitingForCleanup" || c.ObservedGeneration != deletingGen {
		t.Errorf("CleanupReady = %+v, want WaitingForCleanup at generation %d", c, deletingGen)
	}

	// Cleanup fails: the error is returned, the condition says so, the finalizer stays.
	errCleanup := errors.New("remote cluster unreachable")
	r.cleanup = func(*Widget) (bool, error) { return false, errCleanup }
	if res, err := r.Reconcile(ctx, key); !errors.Is(err, errCleanup) || !res.IsZero() {
		t.Fatalf("failing pass = %+v, %v", res, err)
	}
	w = getWidget(t, key)
	if c := meta.FindStatusCondition(w.Status.Conditions, "CleanupReady"); c == nil || c.Reason != "CleanupFailed" || c.Status != metav1.ConditionFalse {
		t.Errorf("CleanupReady = %+v, want False/CleanupFailed", c)
	}
	if !controllerutil.ContainsFinalizer(w, widgetFinalizer) {
		t.Error("finalizer removed although cleanup failed")
	}
	// The stored Ready names the sub-condition the deletion's generation bump made stale.
	if c := meta.FindStatusCondition(w.Status.Conditions, "Ready"); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Ready = %+v, want False while deleting", c)
	}

	// Cleanup done: the pass flips CleanupReady to True and removes the finalizer, so the
	// object is deleted before the status write. That write is still sent (the status
	// changed), answers 404 for the gone object, and the pass ends without an error.
	var statusWriteErrs []error
	r.client = interceptor.NewClient(withWatch(t), interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			err := c.SubResource(sub).Update(ctx, obj, opts...)
			statusWriteErrs = append(statusWriteErrs, err)
			return err
		},
	})
	r.cleanup = func(w *Widget) (bool, error) {
		reconcile.MarkTrue(w, "CleanupReady", "CleanupDone", "remote children removed")
		return true, nil
	}
	if res, err := r.Reconcile(ctx, key); err != nil || !res.IsZero() {
		t.Fatalf("final pass = %+v, %v", res, err)
	}
	if err := env.Client.Get(ctx, key, &Widget{}); !apierrors.IsNotFound(err) {
		t.Errorf("widget still there after its finalizer was removed: %v", err)
	}
	if len(statusWriteErrs) != 1 || !apierrors.IsNotFound(statusWriteErrs[0]) {
		t.Errorf("final pass status writes returned %v, want one 404 for the gone object", statusWriteErrs)
	}
	// And a pass for the gone object is a no-op.
	if res, err := r.Reconcile(ctx, key); err != nil || !res.IsZero() {
		t.Errorf("pass on a deleted object = %+v, %v", res, err)
	}
}

func TestRunPassSurvivesConflict(t *testing.T) {
	ctx := context.Background()
	key := createWidget(t, env.Namespace(t))
	r := newWidgetReconciler(t, env.Client)
	if _, err := r.Reconcile(ctx, key); err != nil {
		t.Fatal(err)
	}

	// Between this pass's read and its status write, another writer changes the status:
	// it adds a condition of its own, rewrites one this pass also changes, and leaves
	// the endpoint alone. The pass's write then fails with a real 409, and the retry
	// writes this pass's changes of what the other writer left alone; the other writer's
	// ConfigReady, newer than what this pass decided from, stays, and the pass asks to
	// run again sooner than its own requeue.
	var statusUpdates atomic.Int32
	c := interceptor.NewClient(withWatch(t), interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if statusUpdates.Add(1) == 1 {
				other := getWidget(t, key)
				reconcile.MarkTrue(other, "External", "SetByOthers", "kept")
				reconcile.MarkTrue(other, "ConfigReady", "RenderedByOthers", "newer")
				if err := env.Client.Status().Update(ctx, other); err != nil {
					t.Errorf("concurrent write: %v", err)
				}
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	})
	r.client = c
	r.config = func(w *Widget) (ctrl.Result, error) {
		reconcile.MarkFalse(w, "ConfigReady", "ConfigError", "template error")
		return ctrl.Result{}, nil
	}
	r.deployment = func(w *Widget) (ctrl.Result, error) {
		w.Status.Endpoint = "http://moved:8080"
		reconcile.MarkFalse(w, "DeploymentReady", "WaitingForDeployment", "rolling")
		return ctrl.Result{RequeueAfter: reconcile.DeploymentPollInterval}, nil
	}
	res, err := r.Reconcile(ctx, key)
	if err != nil || res.RequeueAfter != reconcile.StaleStatusRequeue {
		t.Fatalf("pass = %+v, %v; want the requeue after StaleStatusRequeue and no error", res, err)
	}
	if n := statusUpdates.Load(); n != 2 {
		t.Errorf("status updates = %d, want 2 (the conflicting one and the retry)", n)
	}
	w := getWidget(t, key)
	assertConditions(t, w,
		cond("SecretsReady", "True", "SecretsAvailable", "secret key present", 1),
		cond("ConfigReady", "True", "RenderedByOthers", "newer", 1),
		cond("DeploymentReady", "False", "WaitingForDeployment", "rolling", 1),
		cond("External", "True", "SetByOthers", "kept", 1),
		cond("Ready", "False", "WaitingForDeployment", "DeploymentReady is False: rolling", 1),
	)
	if w.Status.Endpoint != "http://moved:8080" {
		t.Errorf("endpoint = %q, want this pass's change reapplied", w.Status.Endpoint)
	}
}

// TestRunPassObjectGoneDuringConflictRetry: the status write answers 409 and the object
// is deleted before the refetch; the refetch's 404 ends the retry without an error.
func TestRunPassObjectGoneDuringConflictRetry(t *testing.T) {
	ctx := context.Background()
	key := createWidget(t, env.Namespace(t))
	var statusUpdates atomic.Int32
	var getErrs []error
	c := interceptor.NewClient(withWatch(t), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			err := c.Get(ctx, key, obj, opts...)
			if statusUpdates.Load() > 0 {
				getErrs = append(getErrs, err)
			}
			return err
		},
		SubResourceUpdate: func(ctx context.Context, _ client.Client, _ string, obj client.Object, _ ...client.SubResourceUpdateOption) error {
			if statusUpdates.Add(1) == 1 {
				// The widget has no finalizer: the delete removes it at once.
				if err := env.Client.Delete(ctx, getWidget(t, key)); err != nil {
					t.Errorf("concurrent delete: %v", err)
				}
			}
			return apierrors.NewConflict(schema.GroupResource{Group: widgetGV.Group, Resource: "widgets"}, obj.GetName(), errors.New("object was modified"))
		},
	})
	opts := reconcile.DefaultPassOptions("SecretsReady")
	opts.ConflictBackoff = wait.Backoff{Steps: 3, Duration: 1}
	res, err := reconcile.RunPass(ctx, c, key, &Widget{}, opts, func(_ context.Context, w *Widget) (ctrl.Result, error) {
		reconcile.MarkTrue(w, "SecretsReady", "SecretsAvailable", "")
		return ctrl.Result{RequeueAfter: reconcile.RetryInterval}, nil
	})
	if err != nil || res.RequeueAfter != reconcile.RetryInterval {
		t.Fatalf("pass = %+v, %v; want its requeue and no error for the gone object", res, err)
	}
	if n := statusUpdates.Load(); n != 1 {
		t.Errorf("status updates = %d, want 1 (the conflicting one; the gone object is not written)", n)
	}
	if len(getErrs) != 1 || !apierrors.IsNotFound(getErrs[0]) {
		t.Errorf("gets after the conflict returned %v, want one 404 (the refetch)", getErrs)
	}
}

func TestRunPassPersistentConflictFails(t *testing.T) {
	ctx := context.Background()
	key := createWidget(t, env.Namespace(t))
	var attempts atomic.Int32
	c := interceptor.NewClient(withWatch(t), interceptor.Funcs{
		SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
			attempts.Add(1)
			return apierrors.NewConflict(schema.GroupResource{Group: widgetGV.Group, Resource: "widgets"}, key.Name, errors.New("object was modified"))
		},
	})
	r := newWidgetReconciler(t, c)
	r.opts.ConflictBackoff = wait.Backoff{Steps: 3, Duration: 1}
	r.deployment = func(w *Widget) (ctrl.Result, error) {
		reconcile.MarkFalse(w, "DeploymentReady", "WaitingForDeployment", "")
		return ctrl.Result{RequeueAfter: reconcile.DeploymentPollInterval}, nil
	}
	res, err := r.Reconcile(ctx, key)
	if !apierrors.IsConflict(err) || !res.IsZero() || !strings.Contains(err.Error(), "Widget "+key.String()) {
		t.Fatalf("pass = %+v, %v; want the conflict naming the object, and no result", res, err)
	}
	if n := attempts.Load(); n != 4 {
		t.Errorf("status write attempts = %d, want 1 + 3 retries", n)
	}
}

func TestRunPassJoinsStatusErrorToPassError(t *testing.T) {
	ctx := context.Background()
	key := createWidget(t, env.Namespace(t))
	errWrite := apierrors.NewServiceUnavailable("etcd leader changed")
	c := interceptor.NewClient(withWatch(t), interceptor.Funcs{
		SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
			return errWrite
		},
	})
	r := newWidgetReconciler(t, c)
	r.config = func(*Widget) (ctrl.Result, error) { return ctrl.Result{}, errConfig }
	_, err := r.Reconcile(ctx, key)
	if !errors.Is(err, errConfig) || !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("error = %v, want both the step's and the status write's", err)
	}
}

// TestRunPassStatusNotServed: a 404 on the status write for an object that still exists
// (a CRD without the status subresource answers so) is an error, not a silent drop.
func TestRunPassStatusNotServed(t *testing.T) {
	ctx := context.Background()
	key := createWidget(t, env.Namespace(t))
	c := interceptor.NewClient(withWatch(t), interceptor.Funcs{
		SubResourceUpdate: func(_ context.Context, _ client.Client, _ string, obj client.Object, _ ...client.SubResourceUpdateOption) error {
			return apierrors.NewNotFound(schema.GroupResource{Group: "test.c5c3.io", Resource: "widgets"}, obj.GetName())
		},
	})
	r := newWidgetReconciler(t, c)
	res, err := r.Reconcile(ctx, key)
	if !errors.Is(err, reconcile.ErrStatusNotServed) || !apierrors.IsNotFound(err) || !res.IsZero() {
		t.Fatalf("pass = %+v, %v; want an error wrapping ErrStatusNotServed and the 404", res, err)
	}
	if !strings.Contains(err.Error(), key.String()) {
		t.Errorf("error %q does not name the object", err)
	}
}

func TestRunPassRecoversPanickingPass(t *testing.T) {
	ctx := context.Background()
	key := createWidget(t, env.Namespace(t))
	res, err := reconcile.RunPass(ctx, env.Client, key, &Widget{}, reconcile.DefaultPassOptions("SecretsReady"),
		func(_ context.Context, w *Widget) (ctrl.Result, error) {
			reconcile.MarkFalse(w, "SecretsReady", "WaitingForSecretKey", "")
			if w.Spec.Replicas >= 0 {
				panic("assignment to entry in nil map")
			}
			return ctrl.Result{RequeueAfter: 1}, nil
		})
	if !errors.Is(err, reconcile.ErrPanic) || !res.IsZero() {
		t.Fatalf("pass = %+v, %v; want ErrPanic", res, err)
	}
	assertConditions(t, getWidget(t, key),
		cond("SecretsReady", "False", "WaitingForSecretKey", "", 1),
		cond("Ready", "False", "WaitingForSecretKey", "SecretsReady is False", 1),
	)
}

func TestRunPassMissingObject(t *testing.T) {
	called := false
	res, err := reconcile.RunPass(context.Background(), env.Client, types.NamespacedName{Namespace: env.Namespace(t), Name: "absent"},
		&Widget{}, reconcile.DefaultPassOptions(), func(context.Context, *Widget) (ctrl.Result, error) {
			called = true
			return ctrl.Result{}, nil
		})
	if err != nil || !res.IsZero() || called {
		t.Errorf("RunPass on a missing object = %+v, %v, pass called %v", res, err, called)
	}
}

// withWatch returns a fresh client.WithWatch on the test control plane, for interceptors.
func withWatch(t *testing.T) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
