package deployment_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// childHelper is one Ensure*/flow helper of the package, called on a namespace in which
// an object of the name it wants already exists.
type childHelper struct {
	// existing builds the object that is there before the helper runs (name "web").
	existing func(ns string) client.Object
	// call runs the helper for owner.
	call func(ctx context.Context, c client.Client, owner client.Object, ns string) error
	// notOurs is the error an unowned or foreign object gives; nil: the helper leaves it
	// alone without error (a flow that does not want the child).
	notOurs error
	// beingDeleted is the error an object of owner's that is being deleted gives; nil:
	// the helper waits without error.
	beingDeleted error
	// applies reports whether the helper applies the object, so that an unowned object
	// marked with apply.AdoptAnnotation is adopted.
	applies bool
}

func childHelpers() map[string]childHelper {
	deploy := func(ns string) client.Object { return desiredDeployment(ns, "web", nil) }
	hpa := func(ns string) client.Object {
		h := desiredHPA(5)
		h.Name, h.Namespace = "web", ns
		return h
	}
	return map[string]childHelper{
		"EnsureDeployment": {
			existing: deploy,
			call: func(ctx context.Context, c client.Client, owner client.Object, ns string) error {
				_, err := deployment.EnsureDeployment(ctx, c, env.Scheme, owner, desiredDeployment(ns, "web", nil))
				return err
			},
			notOurs: apply.ErrNotControlled, applies: true,
		},
		"EnsureDeployment with a changed selector": {
			existing: deploy,
			call: func(ctx context.Context, c client.Client, owner client.Object, ns string) error {
				d := desiredDeployment(ns, "web", nil)
				d.Spec.Selector.MatchLabels = map[string]string{"app": "web", "track": "v2"}
				d.Spec.Template.Labels = d.Spec.Selector.MatchLabels
				_, err := deployment.EnsureDeployment(ctx, c, env.Scheme, owner, d)
				return err
			},
			notOurs: apply.ErrNotControlled,
		},
		"EnsureService": {
			existing: func(ns string) client.Object { return desiredService(ns, corev1.ServiceTypeClusterIP) },
			call: func(ctx context.Context, c client.Client, owner client.Object, ns string) error {
				return deployment.EnsureService(ctx, c, env.Scheme, owner, desiredService(ns, corev1.ServiceTypeClusterIP))
			},
			notOurs: apply.ErrNotControlled, beingDeleted: apply.ErrBeingDeleted, applies: true,
		},
		"EnsurePodDisruptionBudget": {
			existing: func(ns string) client.Object { return desiredPDB(ns, 1) },
			call: func(ctx context.Context, c client.Client, owner client.Object, ns string) error {
				return deployment.EnsurePodDisruptionBudget(ctx, c, env.Scheme, owner, desiredPDB(ns, 1))
			},
			notOurs: apply.ErrNotControlled, beingDeleted: apply.ErrBeingDeleted, applies: true,
		},
		"ReconcileHPA wanted": {
			existing: hpa,
			call: func(ctx context.Context, c client.Client, owner client.Object, ns string) error {
				_, err := deployment.ReconcileHPA(ctx, c, env.Scheme, owner, client.ObjectKey{Namespace: ns, Name: "web"}, desiredHPA(5))
				return err
			},
			notOurs: apply.ErrNotControlled, beingDeleted: apply.ErrBeingDeleted, applies: true,
		},
		"ReconcileHPA not wanted": {
			existing: hpa,
			call: func(ctx context.Context, c client.Client, owner client.Object, ns string) error {
				cond, err := deployment.ReconcileHPA(ctx, c, env.Scheme, owner, client.ObjectKey{Namespace: ns, Name: "web"}, nil)
				if err == nil && cond.Reason != deployment.ReasonHPANotRequired {
					return errors.New("condition reason " + cond.Reason)
				}
				return err
			},
		},
		"VPAFlow wanted": {
			existing: func(ns string) client.Object { return desiredVPA(ns, "web") },
			call: func(ctx context.Context, c client.Client, owner client.Object, ns string) error {
				_, err := vpaFlow(ctx, c, env.Scheme, owner, []*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "web")})
				return err
			},
			notOurs: apply.ErrNotControlled, beingDeleted: apply.ErrBeingDeleted, applies: true,
		},
		"VPAFlow not wanted": {
			existing: func(ns string) client.Object { return desiredVPA(ns, "web") },
			call: func(ctx context.Context, c client.Client, owner client.Object, ns string) error {
				cond, err := vpaFlow(ctx, c, env.Scheme, owner, nil)
				if err == nil && cond.Reason != deployment.ReasonVPANotRequired {
					return errors.New("condition reason " + cond.Reason)
				}
				return err
			},
		},
	}
}

// TestHelpersNeverTakeWhatIsNotOurs runs every Ensure*/flow helper of the package
// against an existing object of the name it wants that is unowned (made by kubectl or
// Helm), controlled by someone else, or being deleted: the object is refused (or left
// alone) and never written, deleted or re-created; an unowned object is adopted only
// when it carries apply.AdoptAnnotation.
func TestHelpersNeverTakeWhatIsNotOurs(t *testing.T) {
	for name, h := range childHelpers() {
		t.Run(name, func(t *testing.T) {
			t.Run("unowned", func(t *testing.T) {
				ns := env.Namespace(t)
				owner := newOwner(t, ns, "dashboard")
				theirs := createExisting(t, h.existing(ns), nil)
				err := callCounting(t, h, owner, ns, 0)
				wantRefused(t, err, h.notOurs, "has no controller")
				wantUntouched(t, theirs)
			})
			t.Run("controlled by someone else", func(t *testing.T) {
				ns := env.Namespace(t)
				owner := newOwner(t, ns, "dashboard")
				other := newOwner(t, ns, "someone-else")
				theirs := createExisting(t, h.existing(ns), func(obj client.Object) {
					if err := controllerutil.SetControllerReference(other, obj, env.Scheme); err != nil {
						t.Fatal(err)
					}
				})
				err := callCounting(t, h, owner, ns, 0)
				wantRefused(t, err, h.notOurs, "controlled by ConfigMap someone-else", string(other.UID))
				wantUntouched(t, theirs)
			})
			t.Run("ours, being deleted", func(t *testing.T) {
				ns := env.Namespace(t)
				owner := newOwner(t, ns, "dashboard")
				held := createExisting(t, h.existing(ns), func(obj client.Object) {
					if err := controllerutil.SetControllerReference(owner, obj, env.Scheme); err != nil {
						t.Fatal(err)
					}
					obj.SetFinalizers([]string{testenv.HoldFinalizer})
				})
				env.DeleteHeld(t, held)
				err := callCounting(t, h, owner, ns, 0)
				if h.beingDeleted == nil && err != nil {
					t.Fatalf("err = %v, want none: the helper waits for the deletion", err)
				}
				if h.beingDeleted != nil && !errors.Is(err, h.beingDeleted) {
					t.Fatalf("err = %v, want %v", err, h.beingDeleted)
				}
				wantUntouched(t, held)
			})
			if !h.applies {
				return
			}
			t.Run("unowned, marked for adoption", func(t *testing.T) {
				ns := env.Namespace(t)
				owner := newOwner(t, ns, "dashboard")
				theirs := createExisting(t, h.existing(ns), func(obj client.Object) {
					obj.SetAnnotations(map[string]string{apply.AdoptAnnotation: "true"})
				})
				if err := callCounting(t, h, owner, ns, -1); err != nil {
					t.Fatalf("adoption refused: %v", err)
				}
				now := theirs.DeepCopyObject().(client.Object)
				if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(theirs), now); err != nil {
					t.Fatal(err)
				}
				if now.GetUID() != theirs.GetUID() || !metav1.IsControlledBy(now, owner) {
					t.Errorf("after adoption: UID %s (was %s), controller %+v; want the same object controlled by the owner",
						now.GetUID(), theirs.GetUID(), metav1.GetControllerOf(now))
				}
			})
		})
	}
}

// TestEnsureDeploymentForeignBeingDeleted: a Deployment of another owner that is being
// deleted is refused with apply.ErrBeingDeleted naming its controller (not silently
// waited for); once it is gone the owner's Deployment is created.
func TestEnsureDeploymentForeignBeingDeleted(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	other := newOwner(t, ns, "someone-else")
	held := createExisting(t, desiredDeployment(ns, "web", nil), func(obj client.Object) {
		if err := controllerutil.SetControllerReference(other, obj, env.Scheme); err != nil {
			t.Fatal(err)
		}
		obj.SetFinalizers([]string{testenv.HoldFinalizer})
	})
	env.DeleteHeld(t, held)
	h := childHelpers()["EnsureDeployment"]
	err := callCounting(t, h, owner, ns, 0)
	if !errors.Is(err, apply.ErrBeingDeleted) || errors.Is(err, apply.ErrNotControlled) ||
		!strings.Contains(err.Error(), "controlled by ConfigMap someone-else") {
		t.Fatalf("err = %v, want apply.ErrBeingDeleted naming the controller", err)
	}
	wantUntouched(t, held)

	env.ReleaseFinalizers(t, held)
	eventually(t, "the foreign Deployment to be gone", func(ctx context.Context) (bool, string, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(held), &appsv1.Deployment{})
		return apierrors.IsNotFound(err), "", nil
	})
	mine := desiredDeployment(ns, "web", nil)
	if _, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, mine); err != nil {
		t.Fatal(err)
	}
	if mine.UID == held.GetUID() || !metav1.IsControlledBy(mine, owner) {
		t.Errorf("after the foreign one is gone: UID %s (foreign %s), controller %+v", mine.UID, held.GetUID(), metav1.GetControllerOf(mine))
	}
}

// createExisting creates obj as someone else would, after mutate, and returns the
// server's copy.
func createExisting(t *testing.T, obj client.Object, mutate func(client.Object)) client.Object {
	t.Helper()
	if mutate != nil {
		mutate(obj)
	}
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("create existing %T: %v", obj, err)
	}
	return obj
}

// callCounting runs the helper through a counting client and checks that it sent
// wantWrites writes (-1: any number).
func callCounting(t *testing.T, h childHelper, owner client.Object, ns string, wantWrites int) error {
	t.Helper()
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	err = h.call(context.Background(), c, owner, ns)
	if wantWrites >= 0 && counter.Writes() != wantWrites {
		t.Errorf("sent %d writes (PATCH %d, DELETE %d, POST %d), want %d", counter.Writes(),
			counter.Method("PATCH"), counter.Method("DELETE"), counter.Method("POST"), wantWrites)
	}
	return err
}

// wantRefused checks err against want (nil: no error) and that a refusal names the
// existing object's controller (or says it has none).
func wantRefused(t *testing.T, err, want error, msg ...string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("err = %v, want none: the object is left alone", err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
	var nce *apply.NotControlledError
	if errors.Is(want, apply.ErrNotControlled) && !errors.As(err, &nce) {
		t.Errorf("error %v carries no *apply.NotControlledError", err)
	}
	for _, m := range msg {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("error %q does not mention %q", err, m)
		}
	}
}

// wantUntouched checks that the object before still exists unchanged: the same UID,
// generation (no spec write), owner references, finalizers and deletion state.
func wantUntouched(t *testing.T, before client.Object) {
	t.Helper()
	now := before.DeepCopyObject().(client.Object)
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(before), now); err != nil {
		t.Fatalf("the existing %T is gone: %v", before, err)
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
