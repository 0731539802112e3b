package job_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/job"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// operatorName is the field manager the Applier tests name the operator with.
const operatorName = "my-operator"

// TestConvergedPassThroughApplierSendsNothing: once its Job has completed and the
// informers have caught up, a pass of RunJob and EnsureCronJob through an Applier over
// a manager's cache sends no request at all.
func TestConvergedPassThroughApplierSendsNothing(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	a, counter := env.StartApplier(t, ns, operatorName)
	var done bool
	pass := func(ctx context.Context) error {
		var err error
		if done, err = job.RunJob(ctx, a, env.Scheme, owner, desiredJob(ns, "registry.example/identity:1")); err != nil {
			return err
		}
		return job.EnsureCronJob(ctx, a, env.Scheme, owner, desiredCronJob(ns, "0 * * * *"))
	}

	ctx, writes := apply.WithWrites(context.Background())
	if err := pass(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"Job " + ns + "/db-sync created", "CronJob " + ns + "/trust-flush created"}
	if diff := cmp.Diff(want, testenv.WriteStrings(writes.All())); diff != "" {
		t.Errorf("first pass writes (-want +got):\n%s", diff)
	}
	eventually(t, "the Job to complete, seen through the cache", func(ctx context.Context) (bool, string, error) {
		err := pass(ctx)
		return done, fmt.Sprintf("done=%v", done), err
	})
	testenv.ExpectQuiet(t, counter, 0, pass)
	if !done {
		t.Error("a converged pass reported the Job not done")
	}
}

// TestRunJobRecordsWrites: RunJob reports the Job it creates and the finished run it
// deletes for a re-run through apply.Record; a call on a completed Job records nothing.
func TestRunJobRecordsWrites(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	ctx, writes := apply.WithWrites(context.Background())
	key := "Job " + ns + "/db-sync"

	if _, err := job.RunJob(ctx, env.Client, env.Scheme, owner, desiredJob(ns, "registry.example/identity:1")); err != nil {
		t.Fatal(err)
	}
	runUntilDone(t, owner, func() *batchv1.Job { return desiredJob(ns, "registry.example/identity:1") }, "")
	if done, err := job.RunJob(ctx, env.Client, env.Scheme, owner, desiredJob(ns, "registry.example/identity:1")); err != nil || !done {
		t.Fatalf("completed Job: done=%v err=%v", done, err)
	}
	if diff := cmp.Diff([]string{key + " created"}, testenv.WriteStrings(writes.All())); diff != "" {
		t.Errorf("writes up to the completed run (-want +got):\n%s", diff)
	}
	for _, w := range writes.All() {
		if w.GVK != batchv1.SchemeGroupVersion.WithKind("Job") {
			t.Errorf("write %s has GVK %v", w, w.GVK)
		}
	}

	if _, err := job.RunJob(ctx, env.Client, env.Scheme, owner, desiredJob(ns, "registry.example/identity:2")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{key + " created", key + " deleted", key + " created"}, testenv.WriteStrings(writes.All())); diff != "" {
		t.Errorf("writes after a template change (-want +got):\n%s", diff)
	}
}

// TestJobsThroughApplierWriteUnderTheOperatorsName: the Job RunJob creates and the
// CronJob EnsureCronJob applies through an Applier carry the operator's field manager.
func TestJobsThroughApplierWriteUnderTheOperatorsName(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	a := apply.NewApplier(env.Client, apply.ApplierOptions{FieldManager: operatorName})

	j := desiredJob(ns, "registry.example/identity:1")
	if _, err := job.RunJob(ctx, a, env.Scheme, owner, j); err != nil {
		t.Fatal(err)
	}
	cj := desiredCronJob(ns, "0 * * * *")
	if err := job.EnsureCronJob(ctx, a, env.Scheme, owner, cj); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{operatorName + "/Update"}, testenv.FieldManagers(j)); diff != "" {
		t.Errorf("managers of the Job (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{apply.CreateFieldManager(operatorName) + "/Update"}, testenv.FieldManagers(cj)); diff != "" {
		t.Errorf("managers of the CronJob (-want +got):\n%s", diff)
	}
}
