package job_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/job"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// jobHelper is one helper of the package, called on a namespace in which an object of
// the name it wants already exists.
type jobHelper struct {
	// existing builds the object that is there before the helper runs.
	existing func(ns string) client.Object
	// call runs the helper for owner.
	call func(ctx context.Context, c client.Client, owner client.Object, ns string) error
	// oursBeingDeleted is the error for an object of owner's that is being deleted;
	// nil: the helper waits without error.
	oursBeingDeleted error
	// adopts reports whether an unowned object marked with apply.AdoptAnnotation is
	// adopted (CronJobs are; Jobs never are).
	adopts bool
}

func jobHelpers() map[string]jobHelper {
	// A finished Job whose template differs from the desired one: the re-run path would
	// delete it, were it the owner's.
	finishedJob := func(ns string) client.Object { return simulated(desiredJob(ns, "registry.example/identity:0")) }
	return map[string]jobHelper{
		"RunJob": {
			existing: finishedJob,
			call: func(ctx context.Context, c client.Client, owner client.Object, ns string) error {
				_, err := job.RunJob(ctx, c, env.Scheme, owner, simulated(desiredJob(ns, "registry.example/identity:1")))
				return err
			},
		},
		"RunJobWithKey": {
			existing: finishedJob,
			call: func(ctx context.Context, c client.Client, owner client.Object, ns string) error {
				_, err := job.RunJobWithKey(ctx, c, env.Scheme, owner, simulated(desiredJob(ns, "registry.example/identity:1")), "v2")
				return err
			},
		},
		"EnsureCronJob": {
			existing: func(ns string) client.Object { return desiredCronJob(ns, "0 * * * *") },
			call: func(ctx context.Context, c client.Client, owner client.Object, ns string) error {
				return job.EnsureCronJob(ctx, c, env.Scheme, owner, desiredCronJob(ns, "*/5 * * * *"))
			},
			oursBeingDeleted: apply.ErrBeingDeleted, adopts: true,
		},
	}
}

// TestHelpersNeverTakeWhatIsNotOurs runs RunJob, RunJobWithKey and EnsureCronJob
// against an existing object of the name they want that is unowned (made by kubectl or
// Helm), controlled by someone else, or being deleted: it is refused and never
// written, deleted or re-created. A finished Job that is not the owner's is not
// re-run even though its template differs. Only a CronJob is adopted on
// apply.AdoptAnnotation; a Job never is.
func TestHelpersNeverTakeWhatIsNotOurs(t *testing.T) {
	for name, h := range jobHelpers() {
		t.Run(name, func(t *testing.T) {
			t.Run("unowned", func(t *testing.T) {
				ns := env.Namespace(t)
				owner := newOwner(t, ns, "identity")
				theirs := createExisting(t, h.existing(ns), nil)
				err := callCounting(t, h, owner, ns)
				wantNotControlled(t, err, "has no controller")
				wantUntouched(t, theirs)
			})
			t.Run("controlled by someone else", func(t *testing.T) {
				ns := env.Namespace(t)
				owner := newOwner(t, ns, "identity")
				other := newOwner(t, ns, "someone-else")
				theirs := createExisting(t, h.existing(ns), func(obj client.Object) {
					if err := controllerutil.SetControllerReference(other, obj, env.Scheme); err != nil {
						t.Fatal(err)
					}
				})
				err := callCounting(t, h, owner, ns)
				wantNotControlled(t, err, "controlled by ConfigMap someone-else", string(other.UID))
				wantUntouched(t, theirs)
			})
			t.Run("ours, being deleted", func(t *testing.T) {
				ns := env.Namespace(t)
				owner := newOwner(t, ns, "identity")
				held := createHeld(t, h.existing(ns), owner)
				err := callCounting(t, h, owner, ns)
				if h.oursBeingDeleted == nil && err != nil {
					t.Fatalf("err = %v, want none: the helper waits for the deletion", err)
				}
				if h.oursBeingDeleted != nil && !errors.Is(err, h.oursBeingDeleted) {
					t.Fatalf("err = %v, want %v", err, h.oursBeingDeleted)
				}
				wantUntouched(t, held)
			})
			t.Run("someone else's, being deleted", func(t *testing.T) {
				ns := env.Namespace(t)
				owner := newOwner(t, ns, "identity")
				held := createHeld(t, h.existing(ns), newOwner(t, ns, "someone-else"))
				err := callCounting(t, h, owner, ns)
				if !errors.Is(err, apply.ErrBeingDeleted) || errors.Is(err, apply.ErrNotControlled) {
					t.Fatalf("err = %v, want apply.ErrBeingDeleted (retry once it is gone)", err)
				}
				wantUntouched(t, held)
			})
			t.Run("unowned, marked for adoption", func(t *testing.T) {
				ns := env.Namespace(t)
				owner := newOwner(t, ns, "identity")
				theirs := createExisting(t, h.existing(ns), func(obj client.Object) {
					obj.SetAnnotations(map[string]string{apply.AdoptAnnotation: "true"})
				})
				err := h.call(context.Background(), env.Client, owner, ns)
				if !h.adopts {
					wantNotControlled(t, err, "has no controller", "cannot be adopted")
					wantUntouched(t, theirs)
					return
				}
				if err != nil {
					t.Fatalf("adoption refused: %v", err)
				}
				now := theirs.DeepCopyObject().(client.Object)
				if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(theirs), now); err != nil {
					t.Fatal(err)
				}
				if now.GetUID() != theirs.GetUID() || !metav1.IsControlledBy(now, owner) {
					t.Errorf("after adoption: UID %s (was %s), controller %+v", now.GetUID(), theirs.GetUID(), metav1.GetControllerOf(now))
				}
			})
		})
	}
}

// createExisting creates obj as someone else would, after mutate, and returns the
// server's copy; a Job is then marked complete, so that it is a finished run.
func createExisting(t *testing.T, obj client.Object, mutate func(client.Object)) client.Object {
	t.Helper()
	if mutate != nil {
		mutate(obj)
	}
	ctx := context.Background()
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatalf("create existing %T: %v", obj, err)
	}
	if _, ok := obj.(*batchv1.Job); ok {
		done, err := simulate.MarkJobComplete(ctx, env.Client, client.ObjectKeyFromObject(obj))
		if err != nil {
			t.Fatal(err)
		}
		return done
	}
	return obj
}

// createHeld creates obj controlled by controller and held by a finalizer, deletes it,
// and returns the server's copy, which is being deleted. The finalizer is released when
// the test ends.
func createHeld(t *testing.T, obj client.Object, controller client.Object) client.Object {
	t.Helper()
	held := createExisting(t, obj, func(o client.Object) {
		if err := controllerutil.SetControllerReference(controller, o, env.Scheme); err != nil {
			t.Fatal(err)
		}
		o.SetFinalizers([]string{testenv.HoldFinalizer})
	})
	return env.DeleteHeld(t, held)
}

// callCounting runs the helper through a counting client and checks it wrote nothing.
func callCounting(t *testing.T, h jobHelper, owner client.Object, ns string) error {
	t.Helper()
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	err = h.call(context.Background(), c, owner, ns)
	if counter.Writes() != 0 {
		t.Errorf("sent %d writes (PATCH %d, DELETE %d, POST %d), want none", counter.Writes(),
			counter.Method("PATCH"), counter.Method("DELETE"), counter.Method("POST"))
	}
	return err
}

func wantNotControlled(t *testing.T, err error, msg ...string) {
	t.Helper()
	if !errors.Is(err, apply.ErrNotControlled) || !errors.Is(err, job.ErrNotControlled) {
		t.Fatalf("err = %v, want apply.ErrNotControlled (job.ErrNotControlled)", err)
	}
	var nce *apply.NotControlledError
	if !errors.As(err, &nce) {
		t.Errorf("error %v carries no *apply.NotControlledError", err)
	}
	for _, m := range msg {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("error %q does not mention %q", err, m)
		}
	}
}

// wantUntouched checks that the object before still exists unchanged: the same UID,
// generation, owner references, finalizers and deletion state.
func wantUntouched(t *testing.T, before client.Object) {
	t.Helper()
	now := before.DeepCopyObject().(client.Object)
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(before), now); err != nil {
		if apierrors.IsNotFound(err) {
			t.Fatalf("the existing %T was deleted", before)
		}
		t.Fatal(err)
	}
	if now.GetUID() != before.GetUID() || now.GetGeneration() != before.GetGeneration() ||
		!equality.Semantic.DeepEqual(now.GetOwnerReferences(), before.GetOwnerReferences()) ||
		!equality.Semantic.DeepEqual(now.GetFinalizers(), before.GetFinalizers()) ||
		(now.GetDeletionTimestamp() == nil) != (before.GetDeletionTimestamp() == nil) {
		t.Errorf("existing %T touched: UID %s -> %s, generation %d -> %d, owners %+v -> %+v, deletion %v -> %v",
			before, before.GetUID(), now.GetUID(), before.GetGeneration(), now.GetGeneration(),
			before.GetOwnerReferences(), now.GetOwnerReferences(), before.GetDeletionTimestamp(), now.GetDeletionTimestamp())
	}
}

// TestNilScheme: every exported function that takes a *runtime.Scheme refuses a nil one
// with an error wrapping apply.ErrNilScheme that names the object, before any request
// and without panicking.
func TestNilScheme(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	cases := map[string]struct {
		call  func(ctx context.Context, c client.Client) error
		names string
	}{
		"RunJob": {func(ctx context.Context, c client.Client) error {
			_, err := job.RunJob(ctx, c, nil, owner, desiredJob(ns, "registry.example/identity:1"))
			return err
		}, "Job " + ns + "/db-sync"},
		"RunJobWithKey": {func(ctx context.Context, c client.Client) error {
			_, err := job.RunJobWithKey(ctx, c, nil, owner, desiredJob(ns, "registry.example/identity:1"), "v1")
			return err
		}, "Job " + ns + "/db-sync"},
		"EnsureCronJob": {func(ctx context.Context, c client.Client) error {
			return job.EnsureCronJob(ctx, c, nil, owner, desiredCronJob(ns, "0 * * * *"))
		}, "CronJob " + ns + "/trust-flush"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, counter, err := env.CountingClient()
			if err != nil {
				t.Fatal(err)
			}
			var callErr error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panicked on a nil scheme: %v", r)
					}
				}()
				callErr = tc.call(context.Background(), c)
			}()
			if !errors.Is(callErr, apply.ErrNilScheme) {
				t.Fatalf("err = %v, want apply.ErrNilScheme", callErr)
			}
			if !strings.Contains(callErr.Error(), tc.names) {
				t.Errorf("error %q does not name %q", callErr, tc.names)
			}
			if counter.Total() != 0 {
				t.Errorf("nil scheme sent %d requests, want 0", counter.Total())
			}
		})
	}
}
