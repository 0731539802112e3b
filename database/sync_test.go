package database_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/job"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// syncJob builds the db-sync Job name running image.
func syncJob(ns, name, image string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: batchv1.JobSpec{
			BackoffLimit: new(int32(1)),
			Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: "db-sync", Image: image, Command: []string{"identity-manage", "db_sync"},
					}},
				},
			},
		},
	}
}

// simulated marks j as managed by the kit's status simulator: the real Job controller
// leaves it alone, so the failed case can be written by hand.
func simulated(j *batchv1.Job) *batchv1.Job { return simulate.SimulatedJob(j) }

// markJobFailed writes the status of a Job that exceeded its backoffLimit.
func markJobFailed(t *testing.T, key client.ObjectKey) {
	t.Helper()
	if _, err := simulate.MarkJobFailed(context.Background(), env.Client, key); err != nil {
		t.Fatal(err)
	}
}

// TestReconcileSyncJobsCompletes runs on real controllers: the Job controller runs the
// db-sync pod on kwok, the flow reports DBSyncInProgress until the Job completes and
// DatabaseSynced afterwards, and a synced pass writes nothing.
func TestReconcileSyncJobsCompletes(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	build := func() database.SyncJob { return database.SyncJob{Job: syncJob(ns, "identity-db-sync", "identity:1")} }

	sj := build()
	cond, res, err := database.ReconcileSyncJobs(ctx, env.Client, env.Scheme, owner, sj)
	if err != nil {
		t.Fatal(err)
	}
	want := metav1.Condition{Type: database.ConditionType, Status: metav1.ConditionFalse, Reason: database.ReasonDBSyncInProgress,
		Message: "waiting for db-sync Job " + ns + "/identity-db-sync to complete"}
	if diff := cmp.Diff(want, cond); diff != "" {
		t.Errorf("first pass condition (-want +got):\n%s", diff)
	}
	if res != (ctrl.Result{RequeueAfter: database.PollInterval}) {
		t.Errorf("first pass result = %+v, want RequeueAfter %s", res, database.PollInterval)
	}
	if ref := metav1.GetControllerOf(sj.Job); ref == nil || ref.UID != owner.UID {
		t.Errorf("Job controller reference = %+v, want owner %s", ref, owner.UID)
	}

	eventually(t, "DatabaseSynced", func(ctx context.Context) (bool, string, error) {
		cond, res, err = database.ReconcileSyncJobs(ctx, env.Client, env.Scheme, owner, build())
		return cond.Reason == database.ReasonDatabaseSynced, fmt.Sprintf("%+v %+v", cond, res), err
	})
	want = metav1.Condition{Type: database.ConditionType, Status: metav1.ConditionTrue, Reason: database.ReasonDatabaseSynced,
		Message: "db-sync Job " + ns + "/identity-db-sync completed"}
	if diff := cmp.Diff(want, cond); diff != "" {
		t.Errorf("synced condition (-want +got):\n%s", diff)
	}
	if !res.IsZero() {
		t.Errorf("synced result = %+v, want zero", res)
	}

	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := database.ReconcileSyncJobs(ctx, c, env.Scheme, owner, build()); err != nil {
		t.Fatal(err)
	}
	counter.Reset()
	if _, _, err := database.ReconcileSyncJobs(ctx, c, env.Scheme, owner, build()); err != nil {
		t.Fatal(err)
	}
	if counter.Writes() != 0 || counter.Total() != 1 {
		t.Errorf("synced pass sent %d requests (%d writes), want 1 GET", counter.Total(), counter.Writes())
	}
}

// TestReconcileSyncJobsInOrder: the second Job is not created before the first has
// completed; both complete for real, in order.
//
// The order is checked on the flow's own reads, not on timestamps (one-second
// precision): the flow's client records what each pass last read of db-expand, and the
// create of db-contract must follow a read, in the same pass, that found db-expand
// Complete. Completion is final, so a correct flow always passes; a flow that creates
// db-contract after reading db-expand running (or without reading it in that pass)
// always fails, whatever the timing of the Job controller.
func TestReconcileSyncJobsInOrder(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	build := func() []database.SyncJob {
		return []database.SyncJob{
			{Job: syncJob(ns, "db-expand", "identity:1")},
			{Job: syncJob(ns, "db-contract", "identity:1"), RerunKey: "identity:1"},
		}
	}
	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	var (
		expandRead     string // what this pass last read of db-expand: "", "NotFound", "running", "Complete"
		contractCreate []string
	)
	c := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			err := c.Get(ctx, k, o, opts...)
			if k == objectKey(ns, "db-expand") {
				switch j, _ := o.(*batchv1.Job); {
				case apierrors.IsNotFound(err):
					expandRead = "NotFound"
				case err == nil && jobComplete(j):
					expandRead = "Complete"
				default:
					expandRead = "running"
				}
			}
			return err
		},
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			if client.ObjectKeyFromObject(o) == objectKey(ns, "db-contract") {
				contractCreate = append(contractCreate, expandRead)
			}
			return c.Create(ctx, o, opts...)
		},
	})
	pass := func(ctx context.Context) (metav1.Condition, error) {
		expandRead = ""
		cond, _, err := database.ReconcileSyncJobs(ctx, c, env.Scheme, owner, build()...)
		return cond, err
	}

	cond, err := pass(ctx)
	if err != nil || cond.Reason != database.ReasonDBSyncInProgress || !strings.Contains(cond.Message, "db-expand") {
		t.Fatalf("first pass = (%+v, %v), want DBSyncInProgress on db-expand", cond, err)
	}
	if err := env.Client.Get(ctx, objectKey(ns, "db-contract"), &batchv1.Job{}); !apierrors.IsNotFound(err) {
		t.Fatalf("db-contract before db-expand completed: err = %v, want NotFound", err)
	}

	eventually(t, "both Jobs to complete", func(ctx context.Context) (bool, string, error) {
		cond, err = pass(ctx)
		return cond.Reason == database.ReasonDatabaseSynced, fmt.Sprintf("%+v", cond), err
	})
	if want := "db-sync Jobs " + ns + "/db-expand, " + ns + "/db-contract completed"; cond.Message != want {
		t.Errorf("message = %q, want %q", cond.Message, want)
	}
	// One create of db-contract, in a pass that had read db-expand Complete.
	if diff := cmp.Diff([]string{"Complete"}, contractCreate); diff != "" {
		t.Errorf("db-expand as read before each create of db-contract (-want +got):\n%s", diff)
	}
	contract := &batchv1.Job{}
	if err := env.Client.Get(ctx, objectKey(ns, "db-contract"), contract); err != nil {
		t.Fatal(err)
	}
	if contract.Annotations[job.PodSpecHashAnnotation] == "" {
		t.Error("db-contract carries no re-run key annotation")
	}
}

// jobComplete reports whether j has a Complete condition with status True.
func jobComplete(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// TestReconcileSyncJobsFailed: a permanently failed Job gives DBSyncFailed and a
// terminal error wrapping job.ErrJobFailed, on every pass, without a requeue; a new
// re-run key runs the Job again.
func TestReconcileSyncJobsFailed(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	build := func(key string) database.SyncJob {
		return database.SyncJob{Job: simulated(syncJob(ns, "identity-db-sync", "identity:1")), RerunKey: key}
	}
	if _, _, err := database.ReconcileSyncJobs(ctx, env.Client, env.Scheme, owner, build("v1")); err != nil {
		t.Fatal(err)
	}
	markJobFailed(t, objectKey(ns, "identity-db-sync"))
	first := &batchv1.Job{}
	if err := env.Client.Get(ctx, objectKey(ns, "identity-db-sync"), first); err != nil {
		t.Fatal(err)
	}

	for pass := range 2 {
		cond, res, err := database.ReconcileSyncJobs(ctx, env.Client, env.Scheme, owner, build("v1"))
		want := metav1.Condition{Type: database.ConditionType, Status: metav1.ConditionFalse, Reason: database.ReasonDBSyncFailed,
			Message: "db-sync Job " + ns + "/identity-db-sync failed: BackoffLimitExceeded: Job has reached the specified backoff limit"}
		if diff := cmp.Diff(want, cond); diff != "" {
			t.Errorf("pass %d condition (-want +got):\n%s", pass, diff)
		}
		if !res.IsZero() {
			t.Errorf("pass %d result = %+v, want zero with an error", pass, res)
		}
		if !errors.Is(err, job.ErrJobFailed) || !errors.Is(err, ctrlreconcile.TerminalError(nil)) {
			t.Errorf("pass %d err = %v, want a terminal error wrapping job.ErrJobFailed", pass, err)
		}
	}

	cond, res, err := database.ReconcileSyncJobs(ctx, env.Client, env.Scheme, owner, build("v2"))
	if err != nil || cond.Reason != database.ReasonDBSyncInProgress || res.RequeueAfter != database.PollInterval {
		t.Fatalf("pass with a new re-run key = (%+v, %+v, %v), want DBSyncInProgress", cond, res, err)
	}
	again := &batchv1.Job{}
	if err := env.Client.Get(ctx, objectKey(ns, "identity-db-sync"), again); err != nil {
		t.Fatal(err)
	}
	if again.UID == first.UID {
		t.Error("the failed Job was not re-created for the new re-run key")
	}
}

func TestReconcileSyncJobsInvalid(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	noContainers := syncJob(ns, "db-sync", "identity:1")
	noContainers.Spec.Template.Spec.Containers = nil

	tests := map[string]struct {
		jobs []database.SyncJob
		want error
		text string
	}{
		"no Jobs":       {want: database.ErrInvalidParams, text: "no sync Jobs given"},
		"nil Job":       {jobs: []database.SyncJob{{Job: syncJob(ns, "a", "x")}, {}}, want: database.ErrInvalidParams, text: "sync Job 1 is nil"},
		"no containers": {jobs: []database.SyncJob{{Job: noContainers}}, want: job.ErrInvalidJob, text: "spec.template.spec.containers is empty"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cond, res, err := database.ReconcileSyncJobs(ctx, env.Client, env.Scheme, owner, tc.jobs...)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("err = %v, want %v containing %q", err, tc.want, tc.text)
			}
			if cond != (metav1.Condition{}) || !res.IsZero() {
				t.Errorf("cond %+v result %+v, want zero values with an error", cond, res)
			}
		})
	}
	if err := env.Client.Get(ctx, objectKey(ns, "a"), &batchv1.Job{}); !apierrors.IsNotFound(err) {
		t.Errorf("Job a created despite the nil Job after it: err = %v", err)
	}
}

// TestReconcileSyncJobsAPIError: an API failure returns the zero condition, a zero
// result and the error, neither terminal nor ErrJobFailed, so controller-runtime retries.
func TestReconcileSyncJobsAPIError(t *testing.T) {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "identity", Namespace: "ns", UID: "uid-1"}}
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(env.Scheme).Build(), interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return apierrors.NewServiceUnavailable("etcd is down")
		},
	})
	cond, res, err := database.ReconcileSyncJobs(context.Background(), c, env.Scheme, owner,
		database.SyncJob{Job: syncJob("ns", "db-sync", "identity:1")})
	if !apierrors.IsServiceUnavailable(err) || !strings.Contains(err.Error(), "Job ns/db-sync") {
		t.Fatalf("err = %v, want ServiceUnavailable naming the Job", err)
	}
	if errors.Is(err, job.ErrJobFailed) || errors.Is(err, ctrlreconcile.TerminalError(nil)) {
		t.Errorf("err = %v, want a retryable error", err)
	}
	if cond != (metav1.Condition{}) || !res.IsZero() {
		t.Errorf("cond %+v result %+v, want zero values with an error", cond, res)
	}
}
