package database_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/job"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// existing describes an object of the desired name that is already there before a
// helper runs: made by someone else or on its way out.
type existing struct {
	// prepare changes the object before it is created; owner is the helper's owner.
	prepare func(t *testing.T, ns string, owner, obj client.Object)
	// deleting deletes the object after creating it; a finalizer holds it in deletion.
	deleting bool
	// want is the error the helpers return; text is a part of its message.
	want error
	text string
}

// takeoverCases are the existing objects no helper may take over, delete or write
// over: one without a controller (kubectl, Helm), one controlled by another object,
// and one of the owner's that is being deleted.
func takeoverCases() map[string]existing {
	return map[string]existing{
		"unowned": {
			prepare: func(*testing.T, string, client.Object, client.Object) {},
			want:    apply.ErrNotControlled, text: "has no controller",
		},
		"controlled by another owner": {
			prepare: func(t *testing.T, ns string, _, obj client.Object) {
				other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "helm-release", Namespace: ns}}
				if err := env.Client.Create(context.Background(), other); err != nil {
					t.Fatal(err)
				}
				if err := controllerutil.SetControllerReference(other, obj, env.Scheme); err != nil {
					t.Fatal(err)
				}
			},
			want: apply.ErrNotControlled, text: "is controlled by ConfigMap helm-release",
		},
		"being deleted": {
			prepare: func(t *testing.T, _ string, owner, obj client.Object) {
				if err := controllerutil.SetControllerReference(owner, obj, env.Scheme); err != nil {
					t.Fatal(err)
				}
			},
			deleting: true,
			want:     apply.ErrBeingDeleted,
		},
	}
}

// createExisting creates obj as tc describes and returns the stored copy.
func createExisting(t *testing.T, tc existing, ns string, owner, obj client.Object) client.Object {
	t.Helper()
	ctx := context.Background()
	tc.prepare(t, ns, owner, obj)
	if tc.deleting {
		return env.CreateBeingDeleted(t, obj)
	}
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatalf("create existing %T: %v", obj, err)
	}
	stored := obj.DeepCopyObject().(client.Object)
	if err := env.Client.Get(ctx, key(obj), stored); err != nil {
		t.Fatal(err)
	}
	return stored
}

// untouched fails the test when the object at before's key was written since before
// was read, or is gone.
func untouched(t *testing.T, before client.Object) {
	t.Helper()
	now := before.DeepCopyObject().(client.Object)
	if err := env.Client.Get(context.Background(), key(before), now); err != nil {
		t.Fatalf("%T %s after the call: %v, want it untouched", before, key(before), err)
	}
	if now.GetResourceVersion() != before.GetResourceVersion() || now.GetUID() != before.GetUID() {
		t.Errorf("%T %s was written: resourceVersion %s -> %s, uid %s -> %s", before, key(before),
			before.GetResourceVersion(), now.GetResourceVersion(), before.GetUID(), now.GetUID())
	}
	if diff := cmp.Diff(before.GetOwnerReferences(), now.GetOwnerReferences()); diff != "" {
		t.Errorf("%T %s owner references changed (-before +after):\n%s", before, key(before), diff)
	}
}

// absent fails the test when an object of obj's kind exists at ns/name.
func absent(t *testing.T, ns, name string, obj client.Object) {
	t.Helper()
	if err := env.Client.Get(context.Background(), objectKey(ns, name), obj); !apierrors.IsNotFound(err) {
		t.Errorf("%T %s/%s exists (err %v), want nothing written", obj, ns, name, err)
	}
}

// checkRefused fails the test unless err is tc's refusal naming the object.
func checkRefused(t *testing.T, tc existing, err error, object string) {
	t.Helper()
	if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) || !strings.Contains(err.Error(), object) {
		t.Fatalf("err = %v, want %v naming %s and containing %q", err, tc.want, object, tc.text)
	}
}

// TestEnsureNeverTakesOver: EnsureDatabase and EnsureDatabaseUser refuse an existing
// Database, User or Grant that the owner does not control, or that is being deleted:
// the object is left exactly as it was and nothing after it is written.
func TestEnsureNeverTakesOver(t *testing.T) {
	helpers := map[string]struct {
		obj  func(ns string) client.Object
		call func(ctx context.Context, ns string, owner client.Object) (bool, error)
		// after is what the call must not have written after refusing obj.
		after []client.Object
	}{
		"EnsureDatabase": {
			obj: func(ns string) client.Object { return desiredDatabase(ns) },
			call: func(ctx context.Context, ns string, owner client.Object) (bool, error) {
				return database.EnsureDatabase(ctx, env.Client, env.Scheme, owner, desiredDatabase(ns))
			},
		},
		"EnsureDatabaseUser, existing User": {
			obj: func(ns string) client.Object { return desiredUser(ns) },
			call: func(ctx context.Context, ns string, owner client.Object) (bool, error) {
				return database.EnsureDatabaseUser(ctx, env.Client, env.Scheme, owner, desiredUser(ns), desiredGrant(ns))
			},
			after: []client.Object{&mariadbv1alpha1.Grant{}},
		},
		"EnsureDatabaseUser, existing Grant": {
			obj: func(ns string) client.Object { return desiredGrant(ns) },
			call: func(ctx context.Context, ns string, owner client.Object) (bool, error) {
				return database.EnsureDatabaseUser(ctx, env.Client, env.Scheme, owner, desiredUser(ns), desiredGrant(ns))
			},
		},
	}
	for hname, h := range helpers {
		for cname, tc := range takeoverCases() {
			t.Run(hname+"/"+cname, func(t *testing.T) {
				ctx := context.Background()
				ns := env.Namespace(t)
				owner := newOwner(t, ns)
				before := createExisting(t, tc, ns, owner, h.obj(ns))
				ready, err := h.call(ctx, ns, owner)
				if ready {
					t.Error("ready = true, want false")
				}
				kind := strings.TrimPrefix(fmt.Sprintf("%T", before), "*v1alpha1.")
				checkRefused(t, tc, err, kind+" "+ns+"/identity")
				untouched(t, before)
				for _, o := range h.after {
					absent(t, ns, "identity", o)
				}
			})
		}
	}
}

// TestReconcileProvisionNeverTakesOver: the flow stops at an existing Database it may
// not apply over, and writes nothing after it.
func TestReconcileProvisionNeverTakesOver(t *testing.T) {
	for name, tc := range takeoverCases() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			need(t)(simulate.MarkMariaDBReady(ctx, env.Client, newMariaDB(t, ns)))
			before := createExisting(t, tc, ns, owner, desiredDatabase(ns))
			cond, res, err := provision(ctx, t, env.Client, owner, true)
			checkRefused(t, tc, err, "Database "+ns+"/identity")
			if cond != (metav1.Condition{}) || !res.IsZero() {
				t.Errorf("cond %+v result %+v, want zero values with the error", cond, res)
			}
			untouched(t, before)
			absent(t, ns, passwordSecret, &corev1.Secret{})
			absent(t, ns, "identity", &mariadbv1alpha1.User{})
			absent(t, ns, "identity", &mariadbv1alpha1.Grant{})
		})
	}
}

// TestReconcileProvisionPasswordSecretOfOthers: a password Secret made by someone else
// (an ExternalSecret controls the Secret it syncs) is read and never written, whoever
// controls it; one that is being deleted is waited for, not used and not re-created
// over, and the User is not applied with a password that is going away.
func TestReconcileProvisionPasswordSecretOfOthers(t *testing.T) {
	for name, tc := range takeoverCases() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			need(t)(simulate.MarkMariaDBReady(ctx, env.Client, newMariaDB(t, ns)))
			settle(ctx, t, owner, false)
			need(t)(simulate.MarkDatabaseReady(ctx, env.Client, objectKey(ns, "identity")))
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: passwordSecret, Namespace: ns},
				Data: map[string][]byte{"password": []byte("from-openbao")}}
			before := createExisting(t, tc, ns, owner, secret)

			cond, res, err := provision(ctx, t, env.Client, owner, true)
			if err != nil {
				t.Fatal(err)
			}
			untouched(t, before)
			if !tc.deleting {
				if cond.Reason != database.ReasonUserNotReady {
					t.Errorf("condition %+v, want %s: the Secret is read and the User applied", cond, database.ReasonUserNotReady)
				}
				return
			}
			want := metav1.Condition{Type: database.ConditionType, Status: metav1.ConditionFalse,
				Reason:  database.ReasonPasswordSecretNotReady,
				Message: fmt.Sprintf("password Secret %[1]s/identity-db-password of User %[1]s/identity is being deleted", ns)}
			if diff := cmp.Diff(want, cond); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
			if res != (ctrl.Result{RequeueAfter: database.PollInterval}) {
				t.Errorf("result = %+v, want a requeue after %s", res, database.PollInterval)
			}
			absent(t, ns, "identity", &mariadbv1alpha1.User{})
		})
	}
}

// TestReconcileSyncJobsNeverTakesOver: a Job of the sync Job's name that the owner does
// not control is neither read for its result, nor deleted, nor re-run; one of the
// owner's that is being deleted is waited for and nothing is created over it.
func TestReconcileSyncJobsNeverTakesOver(t *testing.T) {
	for name, tc := range takeoverCases() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			// A completed run with another pod template: the owner's would be re-run.
			old := simulated(syncJob(ns, "identity-db-sync", "identity:0"))
			before := createExisting(t, tc, ns, owner, old)
			if !tc.deleting {
				need(t)(simulate.MarkJobComplete(ctx, env.Client, key(old)))
				if err := env.Client.Get(ctx, key(old), before); err != nil {
					t.Fatal(err)
				}
			}

			cond, res, err := database.ReconcileSyncJobs(ctx, env.Client, env.Scheme, owner,
				database.SyncJob{Job: simulated(syncJob(ns, "identity-db-sync", "identity:1"))})
			untouched(t, before)
			if tc.deleting {
				if err != nil || cond.Reason != database.ReasonDBSyncInProgress || res.RequeueAfter != database.PollInterval {
					t.Fatalf("pass = (%+v, %+v, %v), want DBSyncInProgress while the old Job goes", cond, res, err)
				}
				return
			}
			if !errors.Is(err, job.ErrNotControlled) || !strings.Contains(err.Error(), "Job "+ns+"/identity-db-sync") {
				t.Fatalf("err = %v, want job.ErrNotControlled naming the Job", err)
			}
			if cond != (metav1.Condition{}) || !res.IsZero() {
				t.Errorf("cond %+v result %+v, want zero values with the error", cond, res)
			}
		})
	}
}
