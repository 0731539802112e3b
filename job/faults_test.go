package job_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/job"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// createRecorder records the UID of every Job the API server created through the
// clients it makes, whatever the caller was told (a timeout after the create was
// served, a cancelled context).
type createRecorder struct {
	mu   sync.Mutex
	uids []types.UID
}

// client returns a new client of its own (as a second manager would have) on the
// environment that records every Job it creates.
func (r *createRecorder) client(t *testing.T) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			err := c.Create(ctx, obj, opts...)
			if _, isJob := obj.(*batchv1.Job); isJob && err == nil {
				r.mu.Lock()
				r.uids = append(r.uids, obj.GetUID())
				r.mu.Unlock()
			}
			return err
		},
	})
}

func (r *createRecorder) created() []types.UID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]types.UID(nil), r.uids...)
}

// completing serialises completeIfRunning: two managers that both see the new run
// running would otherwise both mark it complete, and the second write would change the
// immutable start and completion times.
var completing sync.Mutex

// completeIfRunning stands in for the Job controller: a Job at key that exists, is not
// being deleted and has not finished is marked complete.
func completeIfRunning(ctx context.Context, key client.ObjectKey) error {
	completing.Lock()
	defer completing.Unlock()
	j := &batchv1.Job{}
	if err := env.Client.Get(ctx, key, j); err != nil {
		return client.IgnoreNotFound(err)
	}
	if j.DeletionTimestamp != nil || len(j.Status.Conditions) > 0 {
		return nil
	}
	_, err := simulate.MarkJobComplete(ctx, env.Client, key)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// runJobPass is one reconcile pass of a run-once step: RunJob (RunJobWithKey when key
// is set) on a simulated Job running image; a Job that is not done yet is completed by
// the simulator and the pass requeues.
func runJobPass(owner client.Object, build func() *batchv1.Job, key string) func(ctx context.Context, c client.Client) (ctrl.Result, error) {
	return func(ctx context.Context, c client.Client) (ctrl.Result, error) {
		j := build()
		var done bool
		var err error
		if key == "" {
			done, err = job.RunJob(ctx, c, env.Scheme, owner, j)
		} else {
			done, err = job.RunJobWithKey(ctx, c, env.Scheme, owner, j, key)
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		if done {
			return ctrl.Result{}, nil
		}
		if err := completeIfRunning(ctx, client.ObjectKeyFromObject(j)); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
}

// jobState describes the Job at key for a FaultMatrix State.
func jobState(t *testing.T, key client.ObjectKey) any {
	t.Helper()
	j := &batchv1.Job{}
	if err := env.Client.Get(context.Background(), key, j); err != nil {
		t.Fatal(err)
	}
	ref := metav1.GetControllerOf(j)
	if ref == nil {
		t.Fatalf("Job %s has no controller", key)
	}
	complete := false
	for _, c := range j.Status.Conditions {
		complete = complete || c.Type == batchv1.JobComplete
	}
	return []any{j.Spec.Template.Spec.Containers[0].Image, j.Annotations[job.PodSpecHashAnnotation], ref.Name, complete}
}

// TestRunJobFaultMatrix runs a first run and a re-run (a completed Job whose template
// changed is deleted and created again) with every API call failing once. The Job is
// created exactly once per run (a create whose answer was lost is not repeated; the
// finished run is not deleted twice), a Job of the same namespace that is not the
// owner's is never touched, and every run converges to the fault-free run's Job.
func TestRunJobFaultMatrix(t *testing.T) {
	for name, rerun := range map[string]bool{"first run": false, "re-run": true} {
		t.Run(name, func(t *testing.T) {
			faults.Matrix{
				Setup: func(t *testing.T) faults.Scenario {
					ctx := context.Background()
					ns := env.Namespace(t)
					owner := newOwner(t, ns, "identity")
					build := func(image string) func() *batchv1.Job {
						return func() *batchv1.Job { return simulated(desiredJob(ns, image)) }
					}
					if rerun {
						old := build("registry.example/identity:1")()
						if _, err := job.RunJob(ctx, env.Client, env.Scheme, owner, old); err != nil {
							t.Fatal(err)
						}
						if _, err := simulate.MarkJobComplete(ctx, env.Client, client.ObjectKeyFromObject(old)); err != nil {
							t.Fatal(err)
						}
					}
					theirs := simulated(desiredJob(ns, "registry.example/other:1"))
					theirs.Name = "someone-elses"
					if err := controllerutil.SetControllerReference(newOwner(t, ns, "someone-else"), theirs, env.Scheme); err != nil {
						t.Fatal(err)
					}
					if err := env.Client.Create(ctx, theirs); err != nil {
						t.Fatal(err)
					}
					rec := &createRecorder{}
					key := client.ObjectKey{Namespace: ns, Name: "db-sync"}
					return faults.Scenario{
						Client: rec.client(t),
						Pass:   runJobPass(owner, build("registry.example/identity:2"), ""),
						Check: func(t *testing.T) {
							if got := rec.created(); len(got) > 1 {
								t.Errorf("the Job ran more than once: created %d times (UIDs %v)", len(got), got)
							}
							now := &batchv1.Job{}
							if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(theirs), now); err != nil || now.UID != theirs.UID || now.DeletionTimestamp != nil {
								t.Errorf("someone else's Job was touched: err %v, UID %s -> %s", err, theirs.UID, now.UID)
							}
						},
						State: func(t *testing.T) any {
							if got := rec.created(); len(got) != 1 {
								t.Errorf("converged after creating the Job %d times, want once", len(got))
							}
							return jobState(t, key)
						},
					}
				},
			}.Run(t)
		})
	}
}

// TestEnsureCronJobFaultMatrix: every API call of EnsureCronJob fails once; a CronJob
// that is not the owner's is never touched and every run converges.
func TestEnsureCronJobFaultMatrix(t *testing.T) {
	faults.Matrix{
		Setup: func(t *testing.T) faults.Scenario {
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "identity")
			theirs := desiredCronJob(ns, "0 0 * * *")
			theirs.Name = "someone-elses"
			if err := env.Client.Create(context.Background(), theirs); err != nil {
				t.Fatal(err)
			}
			return faults.Scenario{
				Client: env.Client,
				Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
					return ctrl.Result{}, job.EnsureCronJob(ctx, c, env.Scheme, owner, desiredCronJob(ns, "*/5 * * * *"))
				},
				Check: func(t *testing.T) {
					now := &batchv1.CronJob{}
					if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(theirs), now); err != nil ||
						now.UID != theirs.UID || now.Generation != theirs.Generation || len(now.OwnerReferences) != 0 {
						t.Errorf("someone else's CronJob was touched: err %v, UID %s -> %s, generation %d -> %d, owners %v",
							err, theirs.UID, now.UID, theirs.Generation, now.Generation, now.OwnerReferences)
					}
				},
				State: func(t *testing.T) any {
					cj := &batchv1.CronJob{}
					if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "trust-flush"}, cj); err != nil {
						t.Fatal(err)
					}
					return []any{cj.Spec.Schedule, metav1.GetControllerOf(cj).Name}
				},
			}
		},
	}.Run(t)
}

// twoManagerSetup creates, in a new namespace, an owner and its completed Job
// "bootstrap" run with re-run key rotation-1, and returns the owner and the pass that
// re-runs it with key rotation-2.
func twoManagerSetup(t *testing.T) (client.Object, *batchv1.Job, func(ctx context.Context, c client.Client) (ctrl.Result, error)) {
	t.Helper()
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	build := func() *batchv1.Job {
		j := simulated(desiredJob(ns, "registry.example/identity:1"))
		j.Name = "bootstrap"
		return j
	}
	old := build()
	if _, err := job.RunJobWithKey(ctx, env.Client, env.Scheme, owner, old, "rotation-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := simulate.MarkJobComplete(ctx, env.Client, client.ObjectKeyFromObject(old)); err != nil {
		t.Fatal(err)
	}
	return owner, old, runJobPass(owner, build, "rotation-2")
}

// converge runs pass through c until it converges. A conflict is retried: it is the
// answer to a delete whose UID precondition no longer holds because the other manager
// replaced the Job in between.
func converge(ctx context.Context, c client.Client, pass func(ctx context.Context, c client.Client) (ctrl.Result, error)) error {
	for range 50 {
		res, err := pass(ctx, c)
		switch {
		case apierrors.IsConflict(err):
			continue
		case err != nil:
			return err
		case res.IsZero():
			return nil
		}
	}
	return errors.New("no convergence within 50 passes")
}

// wantCreatedOnce checks that exactly one Job was created and that it is the stored one.
func wantCreatedOnce(t *testing.T, rec *createRecorder, key client.ObjectKey) {
	t.Helper()
	created := rec.created()
	if len(created) != 1 {
		t.Fatalf("the re-run was created %d times (UIDs %v), want exactly once", len(created), created)
	}
	now := &batchv1.Job{}
	if err := env.Client.Get(context.Background(), key, now); err != nil {
		t.Fatal(err)
	}
	if now.UID != created[0] {
		t.Errorf("stored Job %s is not the one created (%s)", now.UID, created[0])
	}
}

// TestRunJobTwoManagers runs two managers (clients of their own, as during a
// leader-election overlap) on the same owner and re-run key. They race through the
// re-run of a finished Job: reading it, deleting it (each delete preconditioned on the
// UID read) and creating the new run. Exactly one Job is ever created.
func TestRunJobTwoManagers(t *testing.T) {
	// The interleaving that would run the Job twice, forced: manager B reads the
	// finished Job, then manager A deletes it, creates the new run and sees it
	// complete, and only then does B act on its stale read. B's delete must not
	// remove A's run.
	t.Run("stale read", func(t *testing.T) {
		ctx := context.Background()
		_, old, pass := twoManagerSetup(t)
		rec := &createRecorder{}
		a := rec.client(t)
		read, resume := make(chan struct{}), make(chan struct{})
		var once sync.Once
		b := interceptor.NewClient(rec.client(t), interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				err := c.Get(ctx, key, obj, opts...)
				if _, isJob := obj.(*batchv1.Job); isJob {
					once.Do(func() { close(read); <-resume })
				}
				return err
			},
		})
		bDone := make(chan error, 1)
		go func() {
			_, err := pass(ctx, b)
			bDone <- err
		}()
		<-read
		if err := converge(ctx, a, pass); err != nil {
			t.Fatalf("manager A: %v", err)
		}
		close(resume)
		if err := <-bDone; !apierrors.IsConflict(err) {
			t.Errorf("manager B acting on its stale read: err = %v, want a Conflict from the UID precondition", err)
		}
		if err := converge(ctx, b, pass); err != nil {
			t.Fatalf("manager B: %v", err)
		}
		wantCreatedOnce(t, rec, client.ObjectKeyFromObject(old))
	})

	// Free-running: both managers start at once and pass until they converge.
	for round := range 5 {
		t.Run(fmt.Sprintf("race-%d", round), func(t *testing.T) {
			ctx := context.Background()
			_, old, pass := twoManagerSetup(t)
			rec := &createRecorder{}
			managers := []client.Client{rec.client(t), rec.client(t)}
			start := make(chan struct{})
			errs := make([]error, len(managers))
			var wg sync.WaitGroup
			for i, c := range managers {
				wg.Go(func() {
					<-start
					if err := converge(ctx, c, pass); err != nil {
						errs[i] = fmt.Errorf("manager %d: %w", i, err)
					}
				})
			}
			close(start)
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			wantCreatedOnce(t, rec, client.ObjectKeyFromObject(old))
		})
	}
}

// TestRunJobKilledBetweenDeleteAndCreate stops a re-run pass after the finished Job was
// deleted, at the create (a cancelled context, as when the manager shuts down): no Job
// is left, and the next passes create the new run once and converge.
func TestRunJobKilledBetweenDeleteAndCreate(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	old := simulated(desiredJob(ns, "registry.example/identity:1"))
	if _, err := job.RunJob(ctx, env.Client, env.Scheme, owner, old); err != nil {
		t.Fatal(err)
	}
	if _, err := simulate.MarkJobComplete(ctx, env.Client, client.ObjectKeyFromObject(old)); err != nil {
		t.Fatal(err)
	}

	rec := &createRecorder{}
	recording := rec.client(t)
	inj := faults.NewInjector()
	inj.Arm(faults.VerbCreate, 1, faults.Canceled)
	pass := runJobPass(owner, func() *batchv1.Job { return simulated(desiredJob(ns, "registry.example/identity:2")) }, "")
	res, err := pass(ctx, inj.Client(recording))
	if !errors.Is(err, context.Canceled) || !res.IsZero() {
		t.Fatalf("killed pass: result %+v, err %v; want a context.Canceled error", res, err)
	}
	if inj.Calls(faults.VerbDelete) != 1 {
		t.Fatalf("the pass sent %d deletes before it was stopped, want 1", inj.Calls(faults.VerbDelete))
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(old), &batchv1.Job{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after the killed pass: get err = %v, want NotFound (deleted, not yet re-created)", err)
	}

	for n := 1; ; n++ {
		res, err = pass(ctx, recording)
		if err != nil {
			t.Fatalf("pass %d after the kill: %v", n, err)
		}
		if res.IsZero() {
			break
		}
		if n == 5 {
			t.Fatalf("no convergence within %d passes after the kill", n)
		}
	}
	if got := rec.created(); len(got) != 1 {
		t.Errorf("the new run was created %d times, want once", len(got))
	}
	now := &batchv1.Job{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(old), now); err != nil {
		t.Fatal(err)
	}
	if now.UID == old.UID || now.Spec.Template.Spec.Containers[0].Image != "registry.example/identity:2" {
		t.Errorf("converged to UID %s (old %s), image %s", now.UID, old.UID, now.Spec.Template.Spec.Containers[0].Image)
	}
}
