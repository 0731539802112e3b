package database_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/job"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// provisionWorld is one provisioning scenario: an owner and a Ready MariaDB server in
// a fresh namespace, and what the passes have seen so far.
type provisionWorld struct {
	ns    string
	owner client.Object
	// last is the condition of the last pass that returned one.
	last metav1.Condition
	// password is the first password seen in the password Secret; uids the first UID
	// seen of every object, by kind.
	password string
	uids     map[string]string
	// recorder, when set, records the Events of the passes.
	recorder *eventLog
	// lastErr is the error of the last pass.
	lastErr error
}

// connectionSecret is the connection Secret the provisioning passes write.
const connectionSecret = "identity-db-connection"

func newProvisionWorld(t *testing.T) *provisionWorld {
	t.Helper()
	ns := env.Namespace(t)
	w := &provisionWorld{ns: ns, owner: newOwner(t, ns), uids: map[string]string{}}
	need(t)(simulate.MarkMariaDBReady(context.Background(), env.Client, newMariaDB(t, ns)))
	return w
}

// pass is one provisioning pass through c, with the connection Secret, followed by
// what mariadb-operator would do before the next one: the object the pass waits for is
// marked Ready for its current generation (through env.Client, which no fault reaches).
func (w *provisionWorld) pass(ctx context.Context, c client.Client) (ctrl.Result, error) {
	p := params(w.ns, true)
	p.Connection = &database.ConnectionSecretParams{Name: connectionSecret}
	if w.recorder != nil {
		p.Recorder = w.recorder
	}
	out, err := database.ProvisionFlow(ctx, c, env.Scheme, w.owner, p)
	cond, res := out.Condition, out.Result
	if cond.Type != "" {
		w.last = cond
	}
	w.lastErr = err
	// A fresh context: the pass's may be the one a fault cancelled.
	bg, k := context.Background(), objectKey(w.ns, "identity")
	var mark error
	switch cond.Reason {
	case database.ReasonDatabaseNotReady:
		_, mark = simulate.MarkDatabaseReady(bg, env.Client, k)
	case database.ReasonUserNotReady:
		if _, mark = simulate.MarkUserReady(bg, env.Client, k); mark == nil {
			_, mark = simulate.MarkGrantReady(bg, env.Client, k)
		}
	case database.ReasonGrantNotReady:
		_, mark = simulate.MarkGrantReady(bg, env.Client, k)
	}
	if mark != nil {
		return ctrl.Result{}, mark
	}
	return res, err
}

// check asserts what must hold after every pass: the generated password, once there,
// never changes and the Secret never goes; no object, once created, is deleted or
// re-created.
func (w *provisionWorld) check(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	s := &corev1.Secret{}
	switch err := env.Client.Get(ctx, objectKey(w.ns, passwordSecret), s); {
	case apierrors.IsNotFound(err):
		if w.password != "" {
			t.Errorf("the password Secret was deleted")
		}
	case err != nil:
		t.Fatal(err)
	default:
		pw := string(s.Data["password"])
		if w.password == "" {
			w.password = pw
		} else if pw != w.password {
			t.Errorf("the password was regenerated")
		}
	}
	if w.password != "" && w.lastErr != nil && strings.Contains(w.lastErr.Error(), w.password) {
		t.Errorf("the error of the pass quotes the password")
	}
	if w.password != "" && strings.Contains(w.last.Message, w.password) {
		t.Errorf("the condition quotes the password")
	}
	for _, o := range []client.Object{&mariadbv1alpha1.Database{}, &mariadbv1alpha1.User{}, &mariadbv1alpha1.Grant{}, s} {
		name := "identity"
		if _, ok := o.(*corev1.Secret); ok {
			name = passwordSecret
		}
		err := env.Client.Get(ctx, objectKey(w.ns, name), o)
		kind := strings.TrimPrefix(strings.TrimPrefix(typeName(o), "v1alpha1."), "v1.")
		switch prev, seen := w.uids[kind]; {
		case apierrors.IsNotFound(err) && seen:
			t.Errorf("%s was deleted", kind)
		case err != nil && !apierrors.IsNotFound(err):
			t.Fatal(err)
		case err == nil && seen && prev != string(o.GetUID()):
			t.Errorf("%s was re-created", kind)
		case err == nil && !seen:
			w.uids[kind] = string(o.GetUID())
		}
	}
}

// provisioned is the converged world, without what differs between runs (namespace,
// UIDs, the password itself).
type provisioned struct {
	Condition                 metav1.Condition
	Database                  mariadbv1alpha1.DatabaseSpec
	User                      mariadbv1alpha1.UserSpec
	Grant                     mariadbv1alpha1.GrantSpec
	Controllers               []string
	SecretLabels              map[string]string
	SecretType                corev1.SecretType
	PasswordLength            int
	DatabaseReady, GrantReady bool
	// ConnectionURL is the connection Secret's URL with the password as PASSWORD.
	ConnectionURL, ConnectionController string
}

func (w *provisionWorld) state(t *testing.T) any {
	t.Helper()
	ctx := context.Background()
	k := objectKey(w.ns, "identity")
	db, user, grant, s := &mariadbv1alpha1.Database{}, &mariadbv1alpha1.User{}, &mariadbv1alpha1.Grant{}, &corev1.Secret{}
	for _, get := range []error{
		env.Client.Get(ctx, k, db), env.Client.Get(ctx, k, user), env.Client.Get(ctx, k, grant),
		env.Client.Get(ctx, objectKey(w.ns, passwordSecret), s),
	} {
		if get != nil {
			t.Fatal(get)
		}
	}
	var controllers []string
	for _, o := range []client.Object{db, user, grant, s} {
		ref := metav1.GetControllerOf(o)
		if ref == nil {
			controllers = append(controllers, typeName(o)+": none")
			continue
		}
		controllers = append(controllers, typeName(o)+": "+ref.Kind+" "+ref.Name)
	}
	conn := &corev1.Secret{}
	if err := env.Client.Get(ctx, objectKey(w.ns, connectionSecret), conn); err != nil {
		t.Fatal(err)
	}
	connURL := strings.ReplaceAll(string(conn.Data[database.ConnectionDataKey]), string(s.Data["password"]), "PASSWORD")
	cond := w.last
	cond.Message = strings.ReplaceAll(cond.Message, w.ns, "NS")
	return provisioned{
		ConnectionURL: strings.ReplaceAll(connURL, w.ns, "NS"), ConnectionController: controllerOf(conn),
		Condition: cond, Database: db.Spec, User: user.Spec, Grant: grant.Spec, Controllers: controllers,
		SecretLabels: s.Labels, SecretType: s.Type, PasswordLength: len(s.Data["password"]),
		DatabaseReady: meta.IsStatusConditionTrue(db.Status.Conditions, mariadbv1alpha1.ConditionTypeReady),
		GrantReady:    meta.IsStatusConditionTrue(grant.Status.Conditions, mariadbv1alpha1.ConditionTypeReady),
	}
}

func typeName(o runtime.Object) string {
	gvk, err := env.Client.GroupVersionKindFor(o)
	if err != nil {
		return "?"
	}
	return gvk.Kind
}

// TestReconcileProvisionFaultMatrix runs a fresh provisioning, with the connection
// Secret, with every API call of the flow failing once (a write with 409, 500, a timeout after it was served or a
// cancelled context; a read with 500 or a cancelled context): the password is generated once and never replaced, nothing is deleted or
// re-created, and every run converges to the world of the run that never failed.
func TestReconcileProvisionFaultMatrix(t *testing.T) {
	faults.Matrix{Setup: func(t *testing.T) faults.Scenario {
		w := newProvisionWorld(t)
		return faults.Scenario{Client: env.Client, Pass: w.pass, Check: w.check, State: w.state}
	}}.RunWritesAndReads(t)
}

// TestReconcileProvisionKilledMidPass stops a provisioning pass right after each of its
// writes, as a killed or shut-down operator would (the write is stored, every later
// call of the pass fails with a cancelled context): the next passes converge to the
// world of an uninterrupted run, and the password generated before the kill is kept.
func TestReconcileProvisionKilledMidPass(t *testing.T) {
	// The uninterrupted run, counting the writes of every pass.
	ref := newProvisionWorld(t)
	writes := 0
	counting := interceptor.NewClient(mustWithWatch(t), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			writes++
			return c.Create(ctx, o, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, o runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			writes++
			return c.Apply(ctx, o, opts...)
		},
	})
	if !converge(t, ref, counting, 5) {
		t.Fatal("the uninterrupted run did not converge")
	}
	want := ref.state(t)
	if writes == 0 {
		t.Fatal("no writes counted")
	}

	for n := 1; n <= writes; n++ {
		t.Run(fmt.Sprintf("after-write-%d", n), func(t *testing.T) {
			w := newProvisionWorld(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			count := 0
			after := func() {
				mu.Lock()
				defer mu.Unlock()
				if count++; count == n {
					cancel()
				}
			}
			killing := interceptor.NewClient(mustWithWatch(t), interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
					err := c.Create(ctx, o, opts...)
					after()
					return err
				},
				Apply: func(ctx context.Context, c client.WithWatch, o runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
					err := c.Apply(ctx, o, opts...)
					after()
					return err
				},
			})
			killed := false
			for pass := 0; pass < 5 && !killed; pass++ {
				// The killed pass may still report convergence when the kill came after
				// its last call; what matters is the passes after it.
				_, _ = w.pass(ctx, killing)
				w.check(t)
				killed = ctx.Err() != nil
			}
			if !killed {
				t.Fatalf("the run made fewer than %d writes", n)
			}
			if !converge(t, w, env.Client, 5) {
				t.Fatal("no convergence after the kill")
			}
			if diff := cmp.Diff(want, w.state(t)); diff != "" {
				t.Errorf("converged state differs from the uninterrupted run (-want +got):\n%s", diff)
			}
		})
	}
}

// converge runs passes of w through c until one converges, checking w's invariants
// after each, and reports whether it converged within max passes.
func converge(t *testing.T, w *provisionWorld, c client.Client, max int) bool {
	t.Helper()
	for range max {
		res, err := w.pass(context.Background(), c)
		w.check(t)
		if err == nil && res.IsZero() {
			return true
		}
	}
	return false
}

func mustWithWatch(t *testing.T) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// syncWorld is one db-sync scenario: its Jobs are managed by the kit's simulator, and
// every Job a pass created is marked complete before the next pass.
type syncWorld struct {
	ns    string
	owner client.Object
	last  metav1.Condition
	// uids is the first UID seen of every Job, by name and re-run key.
	uids map[string]string
	jobs func() []database.SyncJob
}

func (w *syncWorld) pass(ctx context.Context, c client.Client) (ctrl.Result, error) {
	cond, res, err := database.ReconcileSyncJobs(ctx, c, env.Scheme, w.owner, w.jobs()...)
	if cond.Type != "" {
		w.last = cond
	}
	var list batchv1.JobList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(w.ns)); err != nil {
		return ctrl.Result{}, err
	}
	for i := range list.Items {
		if j := &list.Items[i]; !jobComplete(j) && j.DeletionTimestamp == nil {
			if _, err := simulate.MarkJobComplete(context.Background(), env.Client, client.ObjectKeyFromObject(j)); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	return res, err
}

// check asserts that no Job runs twice: a Job of one name and re-run key, once seen,
// keeps its UID; and that db-contract never exists before db-expand has completed.
func (w *syncWorld) check(t *testing.T) {
	t.Helper()
	var list batchv1.JobList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(w.ns)); err != nil {
		t.Fatal(err)
	}
	complete := map[string]bool{}
	for i := range list.Items {
		j := &list.Items[i]
		id := j.Name + "@" + j.Annotations[job.PodSpecHashAnnotation]
		if prev, ok := w.uids[id]; ok && prev != string(j.UID) {
			t.Errorf("Job %s ran twice", id)
		}
		w.uids[id] = string(j.UID)
		complete[j.Name] = jobComplete(j)
	}
	if _, ok := complete["db-contract"]; ok && !complete["db-expand"] {
		t.Errorf("db-contract exists while db-expand has not completed")
	}
}

// synced is the converged world: the condition and the Jobs by name, with their
// outcome and controller.
type synced struct {
	Condition metav1.Condition
	Jobs      map[string]string
}

func (w *syncWorld) state(t *testing.T) any {
	t.Helper()
	var list batchv1.JobList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(w.ns)); err != nil {
		t.Fatal(err)
	}
	jobs := map[string]string{}
	for _, j := range list.Items {
		// The stored re-run key is an owner-specific digest: only its presence compares.
		jobs[j.Name] = fmt.Sprintf("key=%t complete=%t controller=%s",
			j.Annotations[job.PodSpecHashAnnotation] != "", jobComplete(&j), controllerOf(&j))
	}
	cond := w.last
	cond.Message = strings.ReplaceAll(cond.Message, w.ns, "NS")
	return synced{Condition: cond, Jobs: jobs}
}

func controllerOf(o client.Object) string {
	if ref := metav1.GetControllerOf(o); ref != nil {
		return ref.Kind + " " + ref.Name
	}
	return "none"
}

// TestReconcileSyncJobsFaultMatrix runs the db-sync flow with every API call failing
// once: no Job runs twice, the second Job never starts before the first completed, and
// every run converges to the Jobs of the run that never failed. "fresh" runs two Jobs
// in order; "re-run" replaces a completed Job whose re-run key changed (a delete and a
// create).
func TestReconcileSyncJobsFaultMatrix(t *testing.T) {
	scenarios := map[string]func(t *testing.T, w *syncWorld){
		"fresh": func(t *testing.T, w *syncWorld) {
			w.jobs = func() []database.SyncJob {
				return []database.SyncJob{
					{Job: simulated(syncJob(w.ns, "db-expand", "identity:1"))},
					{Job: simulated(syncJob(w.ns, "db-contract", "identity:1")), RerunKey: "identity:1"},
				}
			}
		},
		"re-run": func(t *testing.T, w *syncWorld) {
			build := func(key string) []database.SyncJob {
				return []database.SyncJob{{Job: simulated(syncJob(w.ns, "db-expand", "identity:1")), RerunKey: key}}
			}
			ctx := context.Background()
			if _, _, err := database.ReconcileSyncJobs(ctx, env.Client, env.Scheme, w.owner, build("v1")...); err != nil {
				t.Fatal(err)
			}
			need(t)(simulate.MarkJobComplete(ctx, env.Client, objectKey(w.ns, "db-expand")))
			w.jobs = func() []database.SyncJob { return build("v2") }
		},
	}
	for name, setup := range scenarios {
		t.Run(name, func(t *testing.T) {
			faults.Matrix{Setup: func(t *testing.T) faults.Scenario {
				ns := env.Namespace(t)
				w := &syncWorld{ns: ns, owner: newOwner(t, ns), uids: map[string]string{}}
				setup(t, w)
				w.check(t)
				return faults.Scenario{Client: env.Client, Pass: w.pass, Check: w.check, State: w.state}
			}}.RunWritesAndReads(t)
		})
	}
}
