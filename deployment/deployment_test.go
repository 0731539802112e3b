package deployment_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/testenv"
)

func TestIsDeploymentReady(t *testing.T) {
	available := func(s corev1.ConditionStatus) appsv1.DeploymentCondition {
		return appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: s}
	}
	progressing := appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue}
	// build is a Deployment whose status has observed its spec and whose ready replicas
	// all run the current pod template (updatedReplicas = readyReplicas), so that each
	// row varies only what it names.
	build := func(replicas *int32, ready int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Generation: 4},
			Spec:       appsv1.DeploymentSpec{Replicas: replicas},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 4, ReadyReplicas: ready, UpdatedReplicas: ready,
				Conditions: conds},
		}
	}
	with := func(d *appsv1.Deployment, f func(*appsv1.Deployment)) *appsv1.Deployment { f(d); return d }
	cases := map[string]struct {
		deploy *appsv1.Deployment
		want   bool
	}{
		// The spec's edge-case table, row by row.
		"Spec.Replicas nil defaults to 1: one ready":     {deploy: build(nil, 1, available(corev1.ConditionTrue)), want: true},
		"Spec.Replicas nil defaults to 1: none ready":    {deploy: build(nil, 0, available(corev1.ConditionTrue)), want: false},
		"no Available condition":                         {deploy: build(new(int32(2)), 2, progressing), want: false},
		"ReadyReplicas < desired":                        {deploy: build(new(int32(3)), 2, available(corev1.ConditionTrue)), want: false},
		"ReadyReplicas >= desired and Available=True":    {deploy: build(new(int32(3)), 3, progressing, available(corev1.ConditionTrue)), want: true},
		"ReadyReplicas > desired (scale-down in flight)": {deploy: build(new(int32(2)), 3, available(corev1.ConditionTrue)), want: true},
		// Stale status: right after a pod-template change the old ReplicaSet still
		// serves and is Available, but the rollout has not happened yet.
		"status.observedGeneration < metadata.generation": {deploy: with(build(new(int32(2)), 2, available(corev1.ConditionTrue)),
			func(d *appsv1.Deployment) { d.Generation = 5 }), want: false},
		"status.updatedReplicas < desired": {deploy: with(build(new(int32(3)), 3, available(corev1.ConditionTrue)),
			func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 2 }), want: false},
		"status.updatedReplicas < desired (nil replicas defaults to 1)": {deploy: with(build(nil, 1, available(corev1.ConditionTrue)),
			func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 0 }), want: false},
		"observedGeneration ahead of a stale generation read": {deploy: with(build(new(int32(1)), 1, available(corev1.ConditionTrue)),
			func(d *appsv1.Deployment) { d.Status.ObservedGeneration = 6 }), want: true},
		"updatedReplicas > desired (surge in flight)": {deploy: with(build(new(int32(2)), 2, available(corev1.ConditionTrue)),
			func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 3 }), want: true},
		// Around the table.
		"Available=False":             {deploy: build(new(int32(1)), 1, available(corev1.ConditionFalse)), want: false},
		"Available=Unknown":           {deploy: build(new(int32(1)), 1, available(corev1.ConditionUnknown)), want: false},
		"scaled to zero, available":   {deploy: build(new(int32(0)), 0, available(corev1.ConditionTrue)), want: true},
		"no status at all":            {deploy: build(new(int32(1)), 0), want: false},
		"nil Deployment is not ready": {deploy: nil, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := deployment.IsDeploymentReady(tc.deploy); got != tc.want {
				t.Errorf("IsDeploymentReady = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestEnsureDeploymentBecomesReady runs on real controllers: the Deployment controller
// creates a ReplicaSet, kwok runs its pods, and EnsureDeployment reports ready from the
// server's answer. A converged call then writes nothing.
func TestEnsureDeploymentBecomesReady(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")

	first := desiredDeployment(ns, "web", new(int32(2)))
	ready, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, first)
	if err != nil || ready {
		t.Fatalf("create: ready=%v err=%v, want (false, nil)", ready, err)
	}
	if ref := metav1.GetControllerOf(first); ref == nil || ref.UID != owner.UID {
		t.Fatalf("controller reference = %+v, want owner %s", ref, owner.UID)
	}

	eventually(t, "EnsureDeployment to report ready", func(ctx context.Context) (bool, string, error) {
		d := desiredDeployment(ns, "web", new(int32(2)))
		ready, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, d)
		return ready, fmt.Sprintf("status %+v", d.Status), err
	})

	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deployment.EnsureDeployment(ctx, c, env.Scheme, owner, desiredDeployment(ns, "web", new(int32(2)))); err != nil {
		t.Fatal(err) // warm the REST mapper
	}
	before := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(first), before); err != nil {
		t.Fatal(err)
	}
	counter.Reset()
	converged := desiredDeployment(ns, "web", new(int32(2)))
	ready, err = deployment.EnsureDeployment(ctx, c, env.Scheme, owner, converged)
	if err != nil || !ready {
		t.Fatalf("converged: ready=%v err=%v, want (true, nil)", ready, err)
	}
	// Two GETs: EnsureDeployment's own read (selector and replica ownership) and the
	// one apply.EnsureObject makes to check who controls the Deployment.
	if got, want := counter.Method("GET"), 2; got != want {
		t.Errorf("converged call sent %d GETs, want %d", got, want)
	}
	if got, want := counter.Method("PATCH"), 1; got != want || counter.Writes() != want {
		t.Errorf("converged call sent %d PATCHes (%d writes), want exactly one no-op apply", got, counter.Writes())
	}
	if !unchangedByApply(before, converged) {
		t.Errorf("converged call wrote: generation %d -> %d, managedFields %s -> %s",
			before.Generation, converged.Generation, managedFieldsString(before), managedFieldsString(converged))
	}
}

// TestEnsureDeploymentNotReadyRightAfterTemplateChange runs on real controllers: once
// the Deployment is ready, a new pod template is applied. The server's answer to that
// apply still shows the old ReplicaSet's pods as ready and the Deployment as Available,
// but its status has not observed the new generation: EnsureDeployment must report not
// ready until the rollout has replaced every replica.
func TestEnsureDeploymentNotReadyRightAfterTemplateChange(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	build := func(image string) *appsv1.Deployment {
		d := desiredDeployment(ns, "web", new(int32(2)))
		d.Spec.Template.Spec.Containers[0].Image = image
		return d
	}
	eventually(t, "the first rollout to become ready", func(ctx context.Context) (bool, string, error) {
		d := build("registry.example/web:1")
		ready, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, d)
		return ready, fmt.Sprintf("status %+v", d.Status), err
	})

	upgraded := build("registry.example/web:2")
	ready, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, upgraded)
	if err != nil {
		t.Fatal(err)
	}
	if ready {
		t.Fatalf("reported ready right after the pod template changed: generation %d, status observedGeneration %d, "+
			"updatedReplicas %d, readyReplicas %d", upgraded.Generation, upgraded.Status.ObservedGeneration,
			upgraded.Status.UpdatedReplicas, upgraded.Status.ReadyReplicas)
	}

	var done *appsv1.Deployment
	eventually(t, "the rollout of the new template to become ready", func(ctx context.Context) (bool, string, error) {
		done = build("registry.example/web:2")
		ready, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, done)
		return ready, fmt.Sprintf("status %+v", done.Status), err
	})
	if done.Status.ObservedGeneration < done.Generation || done.Status.UpdatedReplicas < 2 {
		t.Errorf("ready with status observedGeneration %d (generation %d), updatedReplicas %d (want 2)",
			done.Status.ObservedGeneration, done.Generation, done.Status.UpdatedReplicas)
	}
}

// TestEnsureDeploymentRecreatesOnSelectorChange: spec.selector is immutable, so a new
// selector deletes the Deployment and re-creates it; the garbage collector removes the
// old ReplicaSets and the new Deployment becomes ready through real pods.
func TestEnsureDeploymentRecreatesOnSelectorChange(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")

	old := desiredDeployment(ns, "web-v1", nil)
	if _, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, old); err != nil {
		t.Fatal(err)
	}
	var oldRS []appsv1.ReplicaSet
	eventually(t, "the first ReplicaSet", func(ctx context.Context) (bool, string, error) {
		oldRS = ownedReplicaSets(ctx, t, ns, old.UID)
		return len(oldRS) > 0, fmt.Sprintf("%d ReplicaSets", len(oldRS)), nil
	})

	changed := desiredDeployment(ns, "web-v2", nil)
	ready, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, changed)
	if err != nil || ready {
		t.Fatalf("selector change: ready=%v err=%v, want (false, nil)", ready, err)
	}
	if changed.UID == old.UID {
		t.Fatalf("Deployment kept UID %s: it was not re-created", old.UID)
	}
	if got := changed.Spec.Selector.MatchLabels["app"]; got != "web-v2" {
		t.Errorf("stored selector app=%q, want web-v2", got)
	}
	eventually(t, "the garbage collector to delete the old ReplicaSets", func(ctx context.Context) (bool, string, error) {
		left := ownedReplicaSets(ctx, t, ns, old.UID)
		return len(left) == 0, fmt.Sprintf("%d left", len(left)), nil
	})
	eventually(t, "the re-created Deployment to become ready", func(ctx context.Context) (bool, string, error) {
		d := desiredDeployment(ns, "web-v2", nil)
		ready, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, d)
		if err == nil && d.UID != changed.UID {
			return false, "", fmt.Errorf("re-created again: UID %s -> %s", changed.UID, d.UID)
		}
		return ready, fmt.Sprintf("status %+v", d.Status), err
	})
}

// TestEnsureDeploymentWaitsForDeletion: a Deployment held by a finalizer after the
// selector-change delete (or deleted by someone else) is never applied to; once it is
// gone, the next call creates it.
func TestEnsureDeploymentWaitsForDeletion(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")

	old := desiredDeployment(ns, "web-v1", nil)
	old.Finalizers = []string{testenv.HoldFinalizer}
	if _, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, old); err != nil {
		t.Fatal(err)
	}

	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	// The selector changes; the delete cannot complete while the finalizer holds it.
	ready, err := deployment.EnsureDeployment(ctx, c, env.Scheme, owner, desiredDeployment(ns, "web-v2", nil))
	if err != nil || ready {
		t.Fatalf("selector change under a finalizer: ready=%v err=%v, want (false, nil)", ready, err)
	}
	if counter.Method("DELETE") != 1 || counter.Method("PATCH") != 0 {
		t.Errorf("sent %d DELETEs and %d PATCHes, want 1 and 0", counter.Method("DELETE"), counter.Method("PATCH"))
	}

	// While it is being deleted, calls neither write nor fail.
	counter.Reset()
	ready, err = deployment.EnsureDeployment(ctx, c, env.Scheme, owner, desiredDeployment(ns, "web-v2", nil))
	if err != nil || ready {
		t.Fatalf("being deleted: ready=%v err=%v, want (false, nil)", ready, err)
	}
	if counter.Writes() != 0 {
		t.Errorf("call on a Deployment being deleted sent %d writes, want 0", counter.Writes())
	}

	env.ReleaseFinalizers(t, old)
	eventually(t, "the old Deployment to be gone", func(ctx context.Context) (bool, string, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(old), &appsv1.Deployment{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), nil
	})
	recreated := desiredDeployment(ns, "web-v2", nil)
	if _, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, recreated); err != nil {
		t.Fatal(err)
	}
	if recreated.UID == old.UID || recreated.Spec.Selector.MatchLabels["app"] != "web-v2" {
		t.Errorf("after deletion: UID %s (old %s), selector %v; want a new Deployment selecting app=web-v2",
			recreated.UID, old.UID, recreated.Spec.Selector.MatchLabels)
	}
}

// TestEnsureDeploymentSelectorChangeNeverDeletesForeign: a Deployment of the desired
// name that the owner does not control (installed by Helm, or controlled by another
// CR) is never deleted to re-create it with the new selector. The call fails with an
// error wrapping apply.ErrNotControlled that names the controller, and the Deployment,
// its ReplicaSets and pods stay.
func TestEnsureDeploymentSelectorChangeNeverDeletesForeign(t *testing.T) {
	cases := map[string]struct {
		existing func(t *testing.T, ns string) *appsv1.Deployment
		wantMsg  []string
	}{
		"unowned, installed by Helm": {
			existing: func(t *testing.T, ns string) *appsv1.Deployment {
				d := desiredDeployment(ns, "web-v1", nil)
				d.Labels = map[string]string{"app.kubernetes.io/managed-by": "Helm"}
				if err := env.Client.Create(context.Background(), d); err != nil {
					t.Fatal(err)
				}
				return d
			},
			wantMsg: []string{"has no controller"},
		},
		"unowned, marked for adoption": {
			// Consent to adoption is no consent to deleting the Deployment and its pods.
			existing: func(t *testing.T, ns string) *appsv1.Deployment {
				d := desiredDeployment(ns, "web-v1", nil)
				d.Annotations = map[string]string{apply.AdoptAnnotation: "true"}
				if err := env.Client.Create(context.Background(), d); err != nil {
					t.Fatal(err)
				}
				return d
			},
			wantMsg: []string{"has no controller"},
		},
		"controlled by another owner": {
			existing: func(t *testing.T, ns string) *appsv1.Deployment {
				other := newOwner(t, ns, "someone-else")
				d := desiredDeployment(ns, "web-v1", nil)
				if _, err := deployment.EnsureDeployment(context.Background(), env.Client, env.Scheme, other, d); err != nil {
					t.Fatal(err)
				}
				return d
			},
			wantMsg: []string{"controlled by ConfigMap someone-else"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "dashboard")
			theirs := tc.existing(t, ns)
			eventually(t, "the foreign Deployment's ReplicaSet", func(ctx context.Context) (bool, string, error) {
				rs := ownedReplicaSets(ctx, t, ns, theirs.UID)
				return len(rs) > 0, fmt.Sprintf("%d ReplicaSets", len(rs)), nil
			})

			c, counter, err := env.CountingClient()
			if err != nil {
				t.Fatal(err)
			}
			ready, err := deployment.EnsureDeployment(ctx, c, env.Scheme, owner, desiredDeployment(ns, "web-v2", nil))
			if ready || !errors.Is(err, apply.ErrNotControlled) {
				t.Fatalf("ready=%v err=%v, want (false, error wrapping apply.ErrNotControlled)", ready, err)
			}
			var nce *apply.NotControlledError
			if !errors.As(err, &nce) {
				t.Errorf("error %v carries no *apply.NotControlledError", err)
			}
			for _, want := range append([]string{"Deployment " + ns + "/web", "spec.selector"}, tc.wantMsg...) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if counter.Writes() != 0 {
				t.Errorf("sent %d writes (%d DELETEs) to a Deployment the owner does not control, want 0",
					counter.Writes(), counter.Method("DELETE"))
			}
			now := &appsv1.Deployment{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(theirs), now); err != nil {
				t.Fatalf("the foreign Deployment is gone: %v", err)
			}
			if now.UID != theirs.UID || now.DeletionTimestamp != nil || now.Spec.Selector.MatchLabels["app"] != "web-v1" {
				t.Errorf("foreign Deployment touched: UID %s -> %s, deletionTimestamp %v, selector %v",
					theirs.UID, now.UID, now.DeletionTimestamp, now.Spec.Selector.MatchLabels)
			}
			if !equality.Semantic.DeepEqual(now.OwnerReferences, theirs.OwnerReferences) {
				t.Errorf("owner references changed: %+v -> %+v", theirs.OwnerReferences, now.OwnerReferences)
			}
			if rs := ownedReplicaSets(ctx, t, ns, theirs.UID); len(rs) == 0 {
				t.Errorf("the foreign Deployment lost its ReplicaSets")
			}
		})
	}
}

// TestEnsureDeploymentRecreateDeleteIsPreconditioned: the delete of the selector-change
// path is preconditioned on the UID that was read. When the Deployment is replaced in
// between (deleted and created again by someone else), the delete fails with a
// conflict and the replacement stays.
func TestEnsureDeploymentRecreateDeleteIsPreconditioned(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	old := desiredDeployment(ns, "web-v1", nil)
	if _, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, old); err != nil {
		t.Fatal(err)
	}

	var replacement *appsv1.Deployment
	racing := interceptor.NewClient(withWatch(t), interceptor.Funcs{
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if replacement == nil {
				// Someone replaces the Deployment between our read and our delete.
				if err := env.Client.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: old.Name, Namespace: ns}}); err != nil {
					return err
				}
				replacement = desiredDeployment(ns, "web-v1", nil)
				if _, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, replacement); err != nil {
					return err
				}
			}
			return c.Delete(ctx, obj, opts...)
		},
	})
	ready, err := deployment.EnsureDeployment(ctx, racing, env.Scheme, owner, desiredDeployment(ns, "web-v2", nil))
	if ready || !apierrors.IsConflict(err) {
		t.Fatalf("ready=%v err=%v, want (false, Conflict) from the UID precondition", ready, err)
	}
	now := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(old), now); err != nil {
		t.Fatalf("the replacement is gone: %v", err)
	}
	if now.UID != replacement.UID || now.DeletionTimestamp != nil {
		t.Errorf("stored Deployment UID %s (deletionTimestamp %v), want the untouched replacement %s",
			now.UID, now.DeletionTimestamp, replacement.UID)
	}
}

// scaleAsHPA writes the replica count through the scale subresource under its own field
// manager, the way the HorizontalPodAutoscaler controller does.
func scaleAsHPA(t *testing.T, key client.ObjectKey, replicas int32) {
	t.Helper()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
	scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
	if err := env.Client.SubResource("scale").Update(context.Background(), d,
		client.WithSubResourceBody(scale), client.FieldOwner("horizontal-pod-autoscaler")); err != nil {
		t.Fatalf("scale %s to %d: %v", key, replicas, err)
	}
}

func storedReplicas(t *testing.T, key client.ObjectKey) (int32, *appsv1.Deployment) {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := env.Client.Get(context.Background(), key, d); err != nil {
		t.Fatal(err)
	}
	return *d.Spec.Replicas, d
}

// TestEnsureDeploymentKeepsAutoscaledReplicas: with spec.replicas left nil the replica
// count belongs to an autoscaler. This is what Server-Side Apply does on envtest, and
// what EnsureDeployment adds to it.
func TestEnsureDeploymentKeepsAutoscaledReplicas(t *testing.T) {
	ctx := context.Background()

	t.Run("never owned: the autoscaler's count stays and nothing is written", func(t *testing.T) {
		ns := env.Namespace(t)
		owner := newOwner(t, ns, "dashboard")
		d := desiredDeployment(ns, "web", nil)
		if _, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, d); err != nil {
			t.Fatal(err)
		}
		key := client.ObjectKeyFromObject(d)
		if got, _ := storedReplicas(t, key); got != 1 {
			t.Fatalf("server default replicas = %d, want 1", got)
		}
		scaleAsHPA(t, key, 3)
		_, scaled := storedReplicas(t, key)

		again := desiredDeployment(ns, "web", nil)
		if _, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, again); err != nil {
			t.Fatal(err)
		}
		if *again.Spec.Replicas != 3 || !unchangedByApply(scaled, again) {
			t.Errorf("replicas=%d, generation %d -> %d; want 3 and no write", *again.Spec.Replicas, scaled.Generation, again.Generation)
		}
	})

	t.Run("plain apply of a nil count resets a count the manager owned", func(t *testing.T) {
		// Documents why EnsureDeployment reads before it applies.
		ns := env.Namespace(t)
		owner := newOwner(t, ns, "dashboard")
		if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, desiredDeployment(ns, "web", new(int32(3))), apply.FieldManager); err != nil {
			t.Fatal(err)
		}
		d := desiredDeployment(ns, "web", nil)
		if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, d, apply.FieldManager); err != nil {
			t.Fatal(err)
		}
		if *d.Spec.Replicas != 1 {
			t.Errorf("plain apply left replicas=%d; expected Server-Side Apply to reset the released field to its default 1", *d.Spec.Replicas)
		}
	})

	t.Run("owned count: kept until the autoscaler takes it over", func(t *testing.T) {
		ns := env.Namespace(t)
		owner := newOwner(t, ns, "dashboard")
		if _, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, desiredDeployment(ns, "web", new(int32(3)))); err != nil {
			t.Fatal(err)
		}
		// The CR switches to autoscaling: desired replicas become nil before the
		// autoscaler has written anything.
		d := desiredDeployment(ns, "web", nil)
		key := client.ObjectKeyFromObject(d)
		_, before := storedReplicas(t, key)
		if _, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, d); err != nil {
			t.Fatal(err)
		}
		if *d.Spec.Replicas != 3 || !unchangedByApply(before, d) {
			t.Fatalf("replicas=%d, generation %d -> %d; want 3 and no write", *d.Spec.Replicas, before.Generation, d.Generation)
		}

		// The autoscaler scales: the field moves to its manager, and EnsureDeployment
		// stops sending it.
		scaleAsHPA(t, key, 5)
		_, scaled := storedReplicas(t, key)
		again := desiredDeployment(ns, "web", nil)
		if _, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, again); err != nil {
			t.Fatal(err)
		}
		if *again.Spec.Replicas != 5 || !unchangedByApply(scaled, again) {
			t.Errorf("after autoscaling: replicas=%d, generation %d -> %d; want 5 and no write", *again.Spec.Replicas, scaled.Generation, again.Generation)
		}
		if owned := managerOwnsReplicas(t, again); owned {
			t.Errorf("the SDK's field manager still owns spec.replicas after the autoscaler took it: %s", managedFieldsString(again))
		}

		// An explicit count from the caller wins again.
		pinned := desiredDeployment(ns, "web", new(int32(2)))
		if _, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, pinned); err != nil {
			t.Fatal(err)
		}
		if got, _ := storedReplicas(t, key); got != 2 {
			t.Errorf("explicit replicas: stored %d, want 2", got)
		}
	})
}

func managerOwnsReplicas(t *testing.T, d *appsv1.Deployment) bool {
	t.Helper()
	for _, mf := range d.ManagedFields {
		if mf.Manager == apply.FieldManager && mf.Operation == metav1.ManagedFieldsOperationApply &&
			strings.Contains(string(mf.FieldsV1.GetRawBytes()), `"f:replicas"`) {
			return true
		}
	}
	return false
}

func managedFieldsString(d *appsv1.Deployment) string {
	var b strings.Builder
	for _, mf := range d.ManagedFields {
		fmt.Fprintf(&b, "%s/%s: %s; ", mf.Manager, mf.Operation, mf.FieldsV1.GetRawBytes())
	}
	return b.String()
}

func ownedReplicaSets(ctx context.Context, t testing.TB, ns string, uid types.UID) []appsv1.ReplicaSet {
	t.Helper()
	list := &appsv1.ReplicaSetList{}
	if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []appsv1.ReplicaSet
	for _, rs := range list.Items {
		if ref := metav1.GetControllerOf(&rs); ref != nil && string(ref.UID) == string(uid) {
			out = append(out, rs)
		}
	}
	return out
}

func TestEnsureDeploymentBadInput(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	cases := map[string]struct {
		owner  client.Object
		deploy *appsv1.Deployment
		want   error
		names  string
	}{
		"nil Deployment":        {owner: owner, deploy: nil, want: apply.ErrNilObject},
		"no name":               {owner: owner, deploy: func() *appsv1.Deployment { d := desiredDeployment(ns, "web", nil); d.Name = ""; return d }(), want: apply.ErrMissingName},
		"nil owner":             {owner: nil, deploy: desiredDeployment(ns, "web", nil), want: apply.ErrNilOwner, names: "Deployment " + ns + "/web"},
		"typed nil owner":       {owner: (*corev1.ConfigMap)(nil), deploy: desiredDeployment(ns, "web", nil), want: apply.ErrNilOwner},
		"owner never persisted": {owner: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: ns}}, deploy: desiredDeployment(ns, "web", nil), want: apply.ErrOwnerNotPersisted, names: ns + "/x"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, counter, err := env.CountingClient()
			if err != nil {
				t.Fatal(err)
			}
			ready, err := deployment.EnsureDeployment(context.Background(), c, env.Scheme, tc.owner, tc.deploy)
			if ready || !errors.Is(err, tc.want) {
				t.Fatalf("ready=%v err=%v, want (false, %v)", ready, err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.names) {
				t.Errorf("error %q does not name %q", err, tc.names)
			}
			if counter.Total() != 0 {
				t.Errorf("bad input sent %d requests, want 0", counter.Total())
			}
		})
	}
}

func TestEnsureDeploymentAPIErrors(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", errors.New("denied"))
	cases := map[string]interceptor.Funcs{
		"get fails": {Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			return forbidden
		}},
		"apply fails": {Apply: func(ctx context.Context, c client.WithWatch, obj runtimeApplyConfiguration, opts ...client.ApplyOption) error {
			return forbidden
		}},
	}
	for name, funcs := range cases {
		t.Run(name, func(t *testing.T) {
			failing := interceptor.NewClient(withWatch(t), funcs)
			ready, err := deployment.EnsureDeployment(context.Background(), failing, env.Scheme, owner, desiredDeployment(ns, "web", nil))
			if ready || !apierrors.IsForbidden(err) {
				t.Fatalf("ready=%v err=%v, want (false, Forbidden)", ready, err)
			}
			if want := "Deployment " + ns + "/web"; !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %q", err, want)
			}
		})
	}
}
