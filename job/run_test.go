package job_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/job"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// runUntilDone calls RunJob (or RunJobWithKey when key is set) until it reports
// completion, and returns the completed Job.
func runUntilDone(t *testing.T, owner client.Object, build func() *batchv1.Job, key string) *batchv1.Job {
	t.Helper()
	var done *batchv1.Job
	eventually(t, "the Job to complete", func(ctx context.Context) (bool, string, error) {
		j := build()
		var ok bool
		var err error
		if key == "" {
			ok, err = job.RunJob(ctx, env.Client, env.Scheme, owner, j)
		} else {
			ok, err = job.RunJobWithKey(ctx, env.Client, env.Scheme, owner, j, key)
		}
		done = j
		return ok, fmt.Sprintf("status %+v", j.Status), err
	})
	return done
}

func podsOf(ctx context.Context, t testing.TB, ns string, uid types.UID) []corev1.Pod {
	t.Helper()
	pods := &corev1.PodList{}
	if err := env.Client.List(ctx, pods, client.InNamespace(ns),
		client.MatchingLabels{batchv1.ControllerUidLabel: string(uid)}); err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

func getJob(t *testing.T, key client.ObjectKey) *batchv1.Job {
	t.Helper()
	j := &batchv1.Job{}
	if err := env.Client.Get(context.Background(), key, j); err != nil {
		t.Fatal(err)
	}
	return j
}

// TestRunJobCompletes runs on real controllers: the Job controller creates a pod, kwok
// runs it to success, and RunJob reports completion; afterwards it writes nothing.
func TestRunJobCompletes(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")

	first := desiredJob(ns, "registry.example/identity:1")
	done, err := job.RunJob(ctx, env.Client, env.Scheme, owner, first)
	if err != nil || done {
		t.Fatalf("create: done=%v err=%v, want (false, nil)", done, err)
	}
	if ref := metav1.GetControllerOf(first); ref == nil || ref.UID != owner.UID {
		t.Fatalf("controller reference = %+v, want owner %s", ref, owner.UID)
	}
	want, err := job.PodTemplateHash(&desiredJob(ns, "registry.example/identity:1").Spec.Template)
	if err != nil {
		t.Fatal(err)
	}
	if got := first.Annotations[job.PodSpecHashAnnotation]; got != want {
		t.Errorf("%s = %q, want the pod template hash %q", job.PodSpecHashAnnotation, got, want)
	}

	completed := runUntilDone(t, owner, func() *batchv1.Job { return desiredJob(ns, "registry.example/identity:1") }, "")
	if completed.UID != first.UID {
		t.Fatalf("Job was re-created while running: UID %s -> %s", first.UID, completed.UID)
	}

	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the first call warms the REST mapper
		counter.Reset()
		done, err = job.RunJob(ctx, c, env.Scheme, owner, desiredJob(ns, "registry.example/identity:1"))
		if err != nil || !done {
			t.Fatalf("completed: done=%v err=%v, want (true, nil)", done, err)
		}
	}
	if counter.Total() != 1 || counter.Writes() != 0 {
		t.Errorf("call on a completed Job sent %d requests (%d writes), want one GET", counter.Total(), counter.Writes())
	}
}

// TestRunJobRerunsOnTemplateChange: a completed Job whose pod template changed is
// deleted (the garbage collector removes its pods) and runs again to completion.
func TestRunJobRerunsOnTemplateChange(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	old := runUntilDone(t, owner, func() *batchv1.Job { return desiredJob(ns, "registry.example/identity:1") }, "")
	if len(podsOf(ctx, t, ns, old.UID)) == 0 {
		t.Fatal("completed Job has no pods; the Job controller did not run it")
	}

	upgraded := desiredJob(ns, "registry.example/identity:2")
	done, err := job.RunJob(ctx, env.Client, env.Scheme, owner, upgraded)
	if err != nil || done {
		t.Fatalf("template change: done=%v err=%v, want (false, nil)", done, err)
	}
	if upgraded.UID == old.UID || upgraded.UID == "" {
		t.Fatalf("Job was not re-created: UID %s (old %s)", upgraded.UID, old.UID)
	}
	if upgraded.Annotations[job.PodSpecHashAnnotation] == old.Annotations[job.PodSpecHashAnnotation] {
		t.Errorf("re-created Job kept the old key %s", old.Annotations[job.PodSpecHashAnnotation])
	}
	eventually(t, "the garbage collector to delete the old run's pods", func(ctx context.Context) (bool, string, error) {
		left := podsOf(ctx, t, ns, old.UID)
		return len(left) == 0, fmt.Sprintf("%d pods left", len(left)), nil
	})
	rerun := runUntilDone(t, owner, func() *batchv1.Job { return desiredJob(ns, "registry.example/identity:2") }, "")
	if rerun.UID != upgraded.UID {
		t.Errorf("the re-run was re-created again: UID %s -> %s", upgraded.UID, rerun.UID)
	}
	if img := rerun.Spec.Template.Spec.Containers[0].Image; img != "registry.example/identity:2" {
		t.Errorf("re-run image %s, want registry.example/identity:2", img)
	}
}

// TestRunJobLeavesRunningJob: a running Job is never touched, even when its template
// changed. Its pod cannot be scheduled (no node matches), so it stays running.
func TestRunJobLeavesRunningJob(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	pending := func(image string) *batchv1.Job {
		j := desiredJob(ns, image)
		j.Spec.Template.Spec.NodeSelector = map[string]string{"example.org/no-such-node": "true"}
		return j
	}
	first := pending("registry.example/identity:1")
	if _, err := job.RunJob(ctx, env.Client, env.Scheme, owner, first); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Job controller to start a pod", func(ctx context.Context) (bool, string, error) {
		j := getJob(t, client.ObjectKeyFromObject(first))
		return j.Status.Active > 0, fmt.Sprintf("status %+v", j.Status), nil
	})

	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	for _, image := range []string{"registry.example/identity:1", "registry.example/identity:2"} {
		done, err := job.RunJob(ctx, c, env.Scheme, owner, pending(image))
		if err != nil || done {
			t.Fatalf("running Job, image %s: done=%v err=%v, want (false, nil)", image, done, err)
		}
	}
	if counter.Writes() != 0 {
		t.Errorf("calls on a running Job sent %d writes, want 0", counter.Writes())
	}
	now := getJob(t, client.ObjectKeyFromObject(first))
	if now.UID != first.UID || now.Generation != first.Generation ||
		now.Annotations[job.PodSpecHashAnnotation] != first.Annotations[job.PodSpecHashAnnotation] {
		t.Errorf("running Job was touched: UID %s -> %s, generation %d -> %d", first.UID, now.UID, first.Generation, now.Generation)
	}
}

// TestRunJobPermanentFailure: a failed Job whose key is unchanged is an ErrJobFailed
// error and is left alone; once the template changes it is deleted and re-created.
func TestRunJobPermanentFailure(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	build := func(image string) *batchv1.Job { return simulated(desiredJob(ns, image)) }

	first := build("registry.example/identity:1")
	if _, err := job.RunJob(ctx, env.Client, env.Scheme, owner, first); err != nil {
		t.Fatal(err)
	}
	markJobFailed(t, client.ObjectKeyFromObject(first))

	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	done, err := job.RunJob(ctx, c, env.Scheme, owner, build("registry.example/identity:1"))
	if done || !errors.Is(err, job.ErrJobFailed) {
		t.Fatalf("failed, key unchanged: done=%v err=%v, want (false, ErrJobFailed)", done, err)
	}
	for _, want := range []string{"Job " + ns + "/db-sync", batchv1.JobReasonBackoffLimitExceeded} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if counter.Writes() != 0 {
		t.Errorf("failed Job with unchanged key: %d writes, want 0", counter.Writes())
	}

	fixed := build("registry.example/identity:1-fixed")
	done, err = job.RunJob(ctx, c, env.Scheme, owner, fixed)
	if err != nil || done {
		t.Fatalf("failed, key changed: done=%v err=%v, want (false, nil)", done, err)
	}
	if fixed.UID == first.UID || counter.Method("DELETE") != 1 || counter.Method("POST") != 1 {
		t.Errorf("failed Job was not replaced: UID %s (old %s), %d DELETEs, %d POSTs", fixed.UID, first.UID,
			counter.Method("DELETE"), counter.Method("POST"))
	}
	if len(fixed.Status.Conditions) != 0 {
		t.Errorf("re-created Job carries status %+v", fixed.Status)
	}
}

// TestRunJobWithKey: with an explicit key, a template change alone does not re-run a
// completed Job; a new key does. The key itself is never stored.
func TestRunJobWithKey(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	bootstrap := func(image string) *batchv1.Job {
		j := desiredJob(ns, image)
		j.Name = "bootstrap"
		return j
	}
	const key1, key2 = "sha256:password-digest-1", "sha256:password-digest-2"
	first := runUntilDone(t, owner, func() *batchv1.Job { return bootstrap("registry.example/identity:1") }, key1)
	if strings.Contains(first.Annotations[job.PodSpecHashAnnotation], "password-digest") {
		t.Errorf("annotation stores the key in clear: %q", first.Annotations[job.PodSpecHashAnnotation])
	}

	// An image upgrade with the same key: still done, not re-run.
	upgraded := bootstrap("registry.example/identity:2")
	done, err := job.RunJobWithKey(ctx, env.Client, env.Scheme, owner, upgraded, key1)
	if err != nil || !done {
		t.Fatalf("same key, new image: done=%v err=%v, want (true, nil)", done, err)
	}
	if upgraded.UID != first.UID {
		t.Errorf("same key re-ran the Job: UID %s -> %s", first.UID, upgraded.UID)
	}

	// A rotated password: re-run.
	rotated := bootstrap("registry.example/identity:2")
	done, err = job.RunJobWithKey(ctx, env.Client, env.Scheme, owner, rotated, key2)
	if err != nil || done || rotated.UID == first.UID {
		t.Fatalf("new key: done=%v err=%v UID %s (old %s), want a re-created Job", done, err, rotated.UID, first.UID)
	}
	runUntilDone(t, owner, func() *batchv1.Job { return bootstrap("registry.example/identity:2") }, key2)

	if done, err := job.RunJobWithKey(ctx, env.Client, env.Scheme, owner, bootstrap("x"), ""); done || !errors.Is(err, job.ErrInvalidJob) {
		t.Errorf("empty key: done=%v err=%v, want ErrInvalidJob", done, err)
	}
}

// TestRunJobRefusesTTL: a run-once Job with spec.ttlSecondsAfterFinished would be
// deleted by the TTL controller once finished, and RunJob would then create it again,
// forever. Both RunJob and RunJobWithKey refuse it before any request, with an error
// naming the Job and the field.
func TestRunJobRefusesTTL(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	for _, ttl := range []int32{0, 300} {
		for name, run := range map[string]func(ctx context.Context, c client.Client, j *batchv1.Job) (bool, error){
			"RunJob": func(ctx context.Context, c client.Client, j *batchv1.Job) (bool, error) {
				return job.RunJob(ctx, c, env.Scheme, owner, j)
			},
			"RunJobWithKey": func(ctx context.Context, c client.Client, j *batchv1.Job) (bool, error) {
				return job.RunJobWithKey(ctx, c, env.Scheme, owner, j, "v1")
			},
		} {
			t.Run(fmt.Sprintf("%s/ttl=%d", name, ttl), func(t *testing.T) {
				c, counter, err := env.CountingClient()
				if err != nil {
					t.Fatal(err)
				}
				j := desiredJob(ns, "registry.example/identity:1")
				j.Spec.TTLSecondsAfterFinished = new(ttl)
				done, err := run(context.Background(), c, j)
				if done || !errors.Is(err, job.ErrTTLAfterFinished) || !errors.Is(err, job.ErrInvalidJob) {
					t.Fatalf("done=%v err=%v, want (false, ErrTTLAfterFinished and ErrInvalidJob)", done, err)
				}
				for _, want := range []string{"Job " + ns + "/db-sync", "spec.ttlSecondsAfterFinished"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not mention %q", err, want)
					}
				}
				if counter.Total() != 0 {
					t.Errorf("a Job with a TTL sent %d requests, want 0", counter.Total())
				}
			})
		}
	}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db-sync"}, &batchv1.Job{}); !apierrors.IsNotFound(err) {
		t.Errorf("a Job with a TTL was created: get err = %v, want NotFound", err)
	}
}

// TestRunJobWithKeyDigestIsKeyedPerOwner: the stored re-run key is a keyed digest. It is
// neither the plain SHA-256 of the key nor the same for two owners (in turn, the same
// Job name in the same namespace) with the same key, so a digest computed once cannot be
// looked up in a table of guesses or compared across owners. The re-run decision still
// works: the same key does not re-run a completed Job, a changed key does.
func TestRunJobWithKeyDigestIsKeyedPerOwner(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	const key = "hunter2"
	build := func(image string) *batchv1.Job {
		j := simulated(desiredJob(ns, image))
		j.Name = "bootstrap"
		return j
	}

	first := newOwner(t, ns, "identity-a")
	a := build("registry.example/identity:1")
	if _, err := job.RunJobWithKey(ctx, env.Client, env.Scheme, first, a, key); err != nil {
		t.Fatal(err)
	}
	digestA := a.Annotations[job.PodSpecHashAnnotation]
	if err := env.Client.Delete(ctx, a, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the first owner's Job to be gone", func(ctx context.Context) (bool, string, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(a), &batchv1.Job{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), nil
	})

	second := newOwner(t, ns, "identity-b")
	b := build("registry.example/identity:1")
	if _, err := job.RunJobWithKey(ctx, env.Client, env.Scheme, second, b, key); err != nil {
		t.Fatal(err)
	}
	digestB := b.Annotations[job.PodSpecHashAnnotation]

	plain := sha256.Sum256([]byte(key))
	unkeyed := sha256.Sum256([]byte("rerun-key\x00" + key)) // what earlier versions stored
	for _, d := range []string{digestA, digestB} {
		switch {
		case len(d) != 64:
			t.Errorf("stored digest %q is not 64 hex characters", d)
		case d == hex.EncodeToString(plain[:]):
			t.Errorf("stored digest is the plain SHA-256 of the key")
		case d == hex.EncodeToString(unkeyed[:]):
			t.Errorf("stored digest is the unkeyed SHA-256 of the key")
		case strings.Contains(d, key):
			t.Errorf("stored digest %q contains the key", d)
		}
	}
	if digestA == digestB {
		t.Errorf("two owners with the same key store the same digest %s", digestA)
	}

	// The re-run decision on the second owner's Job.
	if _, err := simulate.MarkJobComplete(ctx, env.Client, client.ObjectKeyFromObject(b)); err != nil {
		t.Fatal(err)
	}
	same := build("registry.example/identity:2")
	done, err := job.RunJobWithKey(ctx, env.Client, env.Scheme, second, same, key)
	if err != nil || !done || same.UID != b.UID {
		t.Fatalf("same key: done=%v err=%v UID %s (was %s), want (true, nil) and no re-run", done, err, same.UID, b.UID)
	}
	rotated := build("registry.example/identity:2")
	done, err = job.RunJobWithKey(ctx, env.Client, env.Scheme, second, rotated, key+"-rotated")
	if err != nil || done || rotated.UID == b.UID || rotated.UID == "" {
		t.Fatalf("changed key: done=%v err=%v UID %s (was %s), want (false, nil) and a new Job", done, err, rotated.UID, b.UID)
	}
	if rotated.Annotations[job.PodSpecHashAnnotation] == digestB {
		t.Errorf("the re-run kept the old digest")
	}
}

// TestRunJobWaitsForDeletion: when the finished Job cannot go at once (a finalizer
// holds it), RunJob reports not done without error or writes, and creates the new run
// once the old one is gone.
func TestRunJobWaitsForDeletion(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	held := func(image string) *batchv1.Job {
		j := desiredJob(ns, image)
		j.Finalizers = []string{testenv.HoldFinalizer}
		return j
	}
	old := runUntilDone(t, owner, func() *batchv1.Job { return held("registry.example/identity:1") }, "")

	done, err := job.RunJob(ctx, env.Client, env.Scheme, owner, held("registry.example/identity:2"))
	if err != nil || done {
		t.Fatalf("re-run under a finalizer: done=%v err=%v, want (false, nil)", done, err)
	}
	lingering := getJob(t, client.ObjectKeyFromObject(old))
	if lingering.UID != old.UID || lingering.DeletionTimestamp == nil {
		t.Fatalf("want the old Job lingering with a deletionTimestamp, got UID %s deletionTimestamp %v", lingering.UID, lingering.DeletionTimestamp)
	}

	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	done, err = job.RunJob(ctx, c, env.Scheme, owner, held("registry.example/identity:2"))
	if err != nil || done || counter.Writes() != 0 {
		t.Fatalf("being deleted: done=%v err=%v writes=%d, want (false, nil) and no writes", done, err, counter.Writes())
	}

	env.ReleaseFinalizers(t, old)
	eventually(t, "the old Job to be gone", func(ctx context.Context) (bool, string, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(old), &batchv1.Job{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), nil
	})
	rerun := desiredJob(ns, "registry.example/identity:2")
	done, err = job.RunJob(ctx, env.Client, env.Scheme, owner, rerun)
	if err != nil || done || rerun.UID == old.UID || rerun.UID == "" {
		t.Fatalf("after deletion: done=%v err=%v UID %s (old %s), want a new Job", done, err, rerun.UID, old.UID)
	}
}

func TestRunJobNotControlled(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	other := newOwner(t, ns, "someone-else")
	if _, err := job.RunJob(ctx, env.Client, env.Scheme, other, desiredJob(ns, "registry.example/identity:1")); err != nil {
		t.Fatal(err)
	}
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	done, err := job.RunJob(ctx, c, env.Scheme, owner, desiredJob(ns, "registry.example/identity:2"))
	if done || !errors.Is(err, job.ErrNotControlled) || !errors.Is(err, apply.ErrNotControlled) ||
		!strings.Contains(err.Error(), "Job "+ns+"/db-sync") || !strings.Contains(err.Error(), "controlled by ConfigMap someone-else") {
		t.Fatalf("done=%v err=%v, want ErrNotControlled naming the Job and its controller", done, err)
	}
	if counter.Writes() != 0 {
		t.Errorf("foreign Job: %d writes, want 0", counter.Writes())
	}
}

func TestRunJobBadInput(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	mutate := func(f func(*batchv1.Job)) *batchv1.Job {
		j := desiredJob(ns, "registry.example/identity:1")
		f(j)
		return j
	}
	cases := map[string]struct {
		owner client.Object
		job   *batchv1.Job
		want  error
		names string
	}{
		"nil Job":             {owner: owner, job: nil, want: job.ErrInvalidJob, names: "nil"},
		"no name":             {owner: owner, job: mutate(func(j *batchv1.Job) { j.Name = "" }), want: job.ErrInvalidJob, names: "metadata.name"},
		"name of 64 chars":    {owner: owner, job: mutate(func(j *batchv1.Job) { j.Name = strings.Repeat("a", 64) }), want: job.ErrInvalidJob, names: "64 characters"},
		"no namespace":        {owner: owner, job: mutate(func(j *batchv1.Job) { j.Namespace = "" }), want: job.ErrInvalidJob, names: "metadata.namespace"},
		"no containers":       {owner: owner, job: mutate(func(j *batchv1.Job) { j.Spec.Template.Spec.Containers = nil }), want: job.ErrInvalidJob, names: "Job " + ns + "/db-sync: invalid job: spec.template.spec.containers"},
		"nil owner":           {owner: nil, job: desiredJob(ns, "x"), want: apply.ErrNilOwner, names: "Job " + ns + "/db-sync"},
		"typed nil owner":     {owner: (*corev1.ConfigMap)(nil), job: desiredJob(ns, "x"), want: apply.ErrNilOwner},
		"owner not persisted": {owner: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ghost", Namespace: ns}}, job: desiredJob(ns, "x"), want: apply.ErrOwnerNotPersisted, names: ns + "/ghost"},
		"owner in another namespace": {owner: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "far", Namespace: "elsewhere", UID: "u-1"}},
			job: desiredJob(ns, "x"), want: apply.ErrInvalidOwner},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, counter, err := env.CountingClient()
			if err != nil {
				t.Fatal(err)
			}
			done, err := job.RunJob(context.Background(), c, env.Scheme, tc.owner, tc.job)
			if done || !errors.Is(err, tc.want) {
				t.Fatalf("done=%v err=%v, want (false, %v)", done, err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.names) {
				t.Errorf("error %q does not mention %q", err, tc.names)
			}
			if counter.Total() != 0 {
				t.Errorf("bad input sent %d requests, want 0", counter.Total())
			}
		})
	}

	t.Run("name of 63 chars is accepted", func(t *testing.T) {
		j := desiredJob(ns, "registry.example/identity:1")
		j.Name = strings.Repeat("a", 63)
		if _, err := job.RunJob(context.Background(), env.Client, env.Scheme, owner, j); err != nil {
			t.Fatalf("63-character name refused: %v", err)
		}
	})
}

func TestRunJobAPIErrors(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "db-sync", errors.New("denied"))

	// A finished Job with an old key, so that the delete path is reached.
	old := simulated(desiredJob(ns, "registry.example/identity:1"))
	if _, err := job.RunJob(ctx, env.Client, env.Scheme, owner, old); err != nil {
		t.Fatal(err)
	}
	markJobFailed(t, client.ObjectKeyFromObject(old))

	cases := map[string]struct {
		funcs interceptor.Funcs
		job   *batchv1.Job
		step  string
	}{
		"get fails": {
			funcs: interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				return forbidden
			}},
			job: desiredJob(ns, "registry.example/identity:2"), step: "get",
		},
		"delete fails": {
			funcs: interceptor.Funcs{Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				return forbidden
			}},
			job: simulated(desiredJob(ns, "registry.example/identity:2")), step: "delete the failed run",
		},
		"create fails": {
			funcs: interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				return forbidden
			}},
			job: func() *batchv1.Job { j := desiredJob(ns, "registry.example/identity:1"); j.Name = "other"; return j }(), step: "create",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
			if err != nil {
				t.Fatal(err)
			}
			done, err := job.RunJob(ctx, interceptor.NewClient(c, tc.funcs), env.Scheme, owner, tc.job)
			if done || !apierrors.IsForbidden(err) {
				t.Fatalf("done=%v err=%v, want (false, Forbidden)", done, err)
			}
			if !strings.Contains(err.Error(), "Job "+ns+"/"+tc.job.Name) || !strings.Contains(err.Error(), tc.step) {
				t.Errorf("error %q does not name the Job and %q", err, tc.step)
			}
		})
	}
}
