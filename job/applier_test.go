package job_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/job"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// operatorName is the field manager the Applier tests name the operator with.
const operatorName = "my-operator"

// managerApplier starts a manager whose cache sees namespace ns and whose requests the
// returned counter counts, and wraps its cached client into an Applier writing under
// operatorName.
func managerApplier(t *testing.T, ns string) (*apply.Applier, *testenv.RequestCounter) {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	counter := &testenv.RequestCounter{}
	cfg.Wrap(counter.Wrap)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             ctrlconfig.Controller{SkipNameValidation: new(true)},
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	return apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{FieldManager: operatorName}), counter
}

// settleQuiet runs pass until one records no change and sends no request (the
// informers have caught up with the earlier passes' writes), then runs three more
// passes and fails the test unless each of them, too, records no change and sends no
// request.
func settleQuiet(t *testing.T, counter *testenv.RequestCounter, pass func(context.Context) error) {
	t.Helper()
	quiet := func(ctx context.Context) (bool, []apply.Write, int, error) {
		ctx, writes := apply.WithWrites(ctx)
		counter.Reset()
		if err := pass(ctx); err != nil {
			return false, nil, 0, err
		}
		n := counter.Total()
		return n == 0 && len(writes.Changed()) == 0, writes.Changed(), n, nil
	}
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) {
			ok, _, _, err := quiet(ctx)
			return ok, err
		})
	if err != nil {
		t.Fatalf("the passes never converged to sending nothing: %v", err)
	}
	for i := range 3 {
		ok, changed, n, err := quiet(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Errorf("converged pass %d sent %d requests and recorded %v, want 0 and nothing", i+1, n, changed)
		}
	}
}

// writeStrings renders writes as "Kind ns/name action fields".
func writeStrings(writes []apply.Write) []string {
	var out []string
	for _, w := range writes {
		s := w.String()
		for i, f := range w.Fields {
			if i == 0 {
				s += " "
			} else {
				s += ","
			}
			s += f
		}
		out = append(out, s)
	}
	return out
}

// managers lists obj's managedFields entries as "manager/operation", leaving out the
// entries of status writes (a controller's, or a simulator's).
func managers(obj client.Object) []string {
	var out []string
	for _, mf := range obj.GetManagedFields() {
		if mf.Subresource == "" {
			out = append(out, mf.Manager+"/"+string(mf.Operation))
		}
	}
	return out
}

// TestConvergedPassThroughApplierSendsNothing: once its Job has completed and the
// informers have caught up, a pass of RunJob and EnsureCronJob through an Applier over
// a manager's cache sends no request at all.
func TestConvergedPassThroughApplierSendsNothing(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "keystone")
	a, counter := managerApplier(t, ns)
	var done bool
	pass := func(ctx context.Context) error {
		var err error
		if done, err = job.RunJob(ctx, a, env.Scheme, owner, desiredJob(ns, "registry.example/keystone:1")); err != nil {
			return err
		}
		return job.EnsureCronJob(ctx, a, env.Scheme, owner, desiredCronJob(ns, "0 * * * *"))
	}

	ctx, writes := apply.WithWrites(context.Background())
	if err := pass(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"Job " + ns + "/db-sync created", "CronJob " + ns + "/trust-flush created"}
	if diff := cmp.Diff(want, writeStrings(writes.All())); diff != "" {
		t.Errorf("first pass writes (-want +got):\n%s", diff)
	}
	eventually(t, "the Job to complete, seen through the cache", func(ctx context.Context) (bool, string, error) {
		err := pass(ctx)
		return done, fmt.Sprintf("done=%v", done), err
	})
	settleQuiet(t, counter, pass)
	if !done {
		t.Error("a converged pass reported the Job not done")
	}
}

// TestRunJobRecordsWrites: RunJob reports the Job it creates and the finished run it
// deletes for a re-run through apply.Record; a call on a completed Job records nothing.
func TestRunJobRecordsWrites(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "keystone")
	ctx, writes := apply.WithWrites(context.Background())
	key := "Job " + ns + "/db-sync"

	if _, err := job.RunJob(ctx, env.Client, env.Scheme, owner, desiredJob(ns, "registry.example/keystone:1")); err != nil {
		t.Fatal(err)
	}
	runUntilDone(t, owner, func() *batchv1.Job { return desiredJob(ns, "registry.example/keystone:1") }, "")
	if done, err := job.RunJob(ctx, env.Client, env.Scheme, owner, desiredJob(ns, "registry.example/keystone:1")); err != nil || !done {
		t.Fatalf("completed Job: done=%v err=%v", done, err)
	}
	if diff := cmp.Diff([]string{key + " created"}, writeStrings(writes.All())); diff != "" {
		t.Errorf("writes up to the completed run (-want +got):\n%s", diff)
	}
	for _, w := range writes.All() {
		if w.GVK != batchv1.SchemeGroupVersion.WithKind("Job") {
			t.Errorf("write %s has GVK %v", w, w.GVK)
		}
	}

	if _, err := job.RunJob(ctx, env.Client, env.Scheme, owner, desiredJob(ns, "registry.example/keystone:2")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{key + " created", key + " deleted", key + " created"}, writeStrings(writes.All())); diff != "" {
		t.Errorf("writes after a template change (-want +got):\n%s", diff)
	}
}

// TestJobsThroughApplierWriteUnderTheOperatorsName: the Job RunJob creates and the
// CronJob EnsureCronJob applies through an Applier carry the operator's field manager.
func TestJobsThroughApplierWriteUnderTheOperatorsName(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "keystone")
	a := apply.NewApplier(env.Client, apply.ApplierOptions{FieldManager: operatorName})

	j := desiredJob(ns, "registry.example/keystone:1")
	if _, err := job.RunJob(ctx, a, env.Scheme, owner, j); err != nil {
		t.Fatal(err)
	}
	cj := desiredCronJob(ns, "0 * * * *")
	if err := job.EnsureCronJob(ctx, a, env.Scheme, owner, cj); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{operatorName + "/Update"}, managers(j)); diff != "" {
		t.Errorf("managers of the Job (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{operatorName + "/Apply"}, managers(cj)); diff != "" {
		t.Errorf("managers of the CronJob (-want +got):\n%s", diff)
	}
}
