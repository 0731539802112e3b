package deployment_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// requeue is what a pass answers while a child is not ready yet.
var requeue = ctrl.Result{RequeueAfter: time.Second}

// deploymentPass is one reconcile pass of the Deployment step: EnsureDeployment with
// the selector app=<app> and zero replicas. A Deployment that is not ready yet is
// marked available by the kit's simulator (for zero replicas the real Deployment
// controller reports the same), and the pass requeues.
func deploymentPass(owner client.Object, ns, app string) func(ctx context.Context, c client.Client) (ctrl.Result, error) {
	return func(ctx context.Context, c client.Client) (ctrl.Result, error) {
		d := desiredDeployment(ns, app, new(int32(0)))
		ready, err := deployment.EnsureDeployment(ctx, c, env.Scheme, owner, d)
		if err != nil {
			return ctrl.Result{}, err
		}
		if ready {
			return ctrl.Result{}, nil
		}
		if d.UID != "" { // applied: stand in for the rollout
			if _, err := simulate.MarkDeploymentAvailable(ctx, env.Client, client.ObjectKeyFromObject(d)); err != nil && !apierrors.IsNotFound(err) {
				return ctrl.Result{}, err
			}
		}
		return requeue, nil
	}
}

// foreignObjects creates, in ns, an object made by kubectl or Helm ("unowned") and one
// controlled by another owner ("foreign"), both built by build, and returns a check
// that both are still there, unchanged and not being deleted.
func foreignObjects(t *testing.T, ns string, build func(name string) client.Object) func(t *testing.T) {
	t.Helper()
	other := newOwner(t, ns, "someone-else")
	unowned := build("unowned")
	foreign := build("foreign")
	if err := controllerutil.SetControllerReference(other, foreign, env.Scheme); err != nil {
		t.Fatal(err)
	}
	uids := map[string]types.UID{}
	for _, obj := range []client.Object{unowned, foreign} {
		if err := env.Client.Create(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
		uids[obj.GetName()] = obj.GetUID()
	}
	return func(t *testing.T) {
		t.Helper()
		for name, uid := range uids {
			now := build(name)
			if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(now), now); err != nil {
				t.Errorf("%T %s (not the owner's): %v", now, name, err)
				continue
			}
			if now.GetUID() != uid || now.GetDeletionTimestamp() != nil {
				t.Errorf("%T %s (not the owner's) was replaced or is being deleted: UID %s -> %s", now, name, uid, now.GetUID())
			}
		}
	}
}

// controllerName names obj's controller, "" when it has none.
func controllerName(obj client.Object) string {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return ref.Kind + "/" + ref.Name
	}
	return ""
}

// TestEnsureDeploymentFaultMatrix runs the selector-change path (delete and re-create)
// with every API call failing once: the Deployments that are not the owner's are never
// touched, the owner's Deployment is re-created at most once, and every run converges
// to the Deployment of the fault-free run.
func TestEnsureDeploymentFaultMatrix(t *testing.T) {
	faults.Matrix{
		Setup: func(t *testing.T) faults.Scenario {
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "dashboard")
			if _, err := deployment.EnsureDeployment(context.Background(), env.Client, env.Scheme, owner,
				desiredDeployment(ns, "web-v1", new(int32(0)))); err != nil {
				t.Fatal(err)
			}
			notOurs := foreignObjects(t, ns, func(name string) client.Object {
				d := desiredDeployment(ns, "web-v1", new(int32(0)))
				d.Name = name
				return d
			})
			key := client.ObjectKey{Namespace: ns, Name: "web"}
			var seen []types.UID
			return faults.Scenario{
				Client: env.Client,
				Pass:   deploymentPass(owner, ns, "web-v2"),
				Check: func(t *testing.T) {
					notOurs(t)
					d := &appsv1.Deployment{}
					if err := env.Client.Get(context.Background(), key, d); err != nil {
						if !apierrors.IsNotFound(err) {
							t.Error(err)
						}
						return
					}
					if !metav1.IsControlledBy(d, owner) {
						t.Errorf("Deployment %s is controlled by %q, not by the owner", key, controllerName(d))
					}
					if !slices.Contains(seen, d.UID) {
						seen = append(seen, d.UID)
					}
					if len(seen) > 2 {
						t.Errorf("Deployment %s was re-created more than once: UIDs %v", key, seen)
					}
				},
				State: func(t *testing.T) any {
					d := &appsv1.Deployment{}
					if err := env.Client.Get(context.Background(), key, d); err != nil {
						t.Fatal(err)
					}
					return []string{d.Spec.Selector.MatchLabels["app"], controllerName(d), d.Spec.Template.Spec.Containers[0].Image}
				},
			}
		},
	}.Run(t)
}

// TestEnsureDeploymentKilledBetweenDeleteAndCreate stops the selector-change pass after
// the delete, at the apply that would create the new Deployment (a cancelled context,
// as when the manager shuts down): no Deployment is left, and the next pass creates it
// and converges.
func TestEnsureDeploymentKilledBetweenDeleteAndCreate(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	old := desiredDeployment(ns, "web-v1", new(int32(0)))
	if _, err := deployment.EnsureDeployment(ctx, env.Client, env.Scheme, owner, old); err != nil {
		t.Fatal(err)
	}

	inj := faults.NewInjector()
	inj.Arm(faults.VerbApply, 1, faults.Canceled)
	pass := deploymentPass(owner, ns, "web-v2")
	res, err := pass(ctx, inj.Client(env.Client))
	if !errors.Is(err, context.Canceled) || !res.IsZero() {
		t.Fatalf("killed pass: result %+v, err %v; want a context.Canceled error", res, err)
	}
	if inj.Calls(faults.VerbDelete) != 1 {
		t.Fatalf("the pass sent %d deletes before it was stopped, want 1", inj.Calls(faults.VerbDelete))
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(old), &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after the killed pass: get err = %v, want NotFound (deleted, not yet re-created)", err)
	}

	for n := 1; ; n++ {
		res, err = pass(ctx, env.Client)
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
	now := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(old), now); err != nil {
		t.Fatal(err)
	}
	if now.UID == old.UID || now.Spec.Selector.MatchLabels["app"] != "web-v2" || !metav1.IsControlledBy(now, owner) {
		t.Errorf("converged to UID %s (old %s), selector %v, controller %q", now.UID, old.UID,
			now.Spec.Selector.MatchLabels, controllerName(now))
	}
}

// TestEnsureServiceFaultMatrix: every API call of EnsureService fails once; Services
// that are not the owner's are never touched and every run converges.
func TestEnsureServiceFaultMatrix(t *testing.T) {
	faults.Matrix{
		Setup: func(t *testing.T) faults.Scenario {
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "dashboard")
			notOurs := foreignObjects(t, ns, func(name string) client.Object {
				s := desiredService(ns, corev1.ServiceTypeClusterIP)
				s.Name = name
				return s
			})
			return faults.Scenario{
				Client: env.Client,
				Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
					return ctrl.Result{}, deployment.EnsureService(ctx, c, env.Scheme, owner, desiredService(ns, corev1.ServiceTypeClusterIP))
				},
				Check: notOurs,
				State: func(t *testing.T) any {
					s := &corev1.Service{}
					if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, s); err != nil {
						t.Fatal(err)
					}
					return []any{s.Spec.Selector, s.Spec.Ports[0].Port, controllerName(s)}
				},
			}
		},
	}.Run(t)
}

// TestEnsurePodDisruptionBudgetFaultMatrix: every API call of EnsurePodDisruptionBudget
// fails once; PodDisruptionBudgets that are not the owner's are never touched and every
// run converges.
func TestEnsurePodDisruptionBudgetFaultMatrix(t *testing.T) {
	faults.Matrix{
		Setup: func(t *testing.T) faults.Scenario {
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "dashboard")
			notOurs := foreignObjects(t, ns, func(name string) client.Object {
				p := desiredPDB(ns, 1)
				p.Name = name
				return p
			})
			return faults.Scenario{
				Client: env.Client,
				Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
					return ctrl.Result{}, deployment.EnsurePodDisruptionBudget(ctx, c, env.Scheme, owner, desiredPDB(ns, 2))
				},
				Check: notOurs,
				State: func(t *testing.T) any {
					p := &policyv1.PodDisruptionBudget{}
					if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, p); err != nil {
						t.Fatal(err)
					}
					return []any{p.Spec.MinAvailable.String(), controllerName(p)}
				},
			}
		},
	}.Run(t)
}

// hpaNames lists the HPAs in ns as name=controller.
func hpaNames(t *testing.T, ns string) []string {
	t.Helper()
	list := &autoscalingv2.HorizontalPodAutoscalerList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := range list.Items {
		h := &list.Items[i]
		out = append(out, fmt.Sprintf("%s=%s max %d", h.Name, controllerName(h), h.Spec.MaxReplicas))
	}
	slices.Sort(out)
	return out
}

// TestReconcileHPAFaultMatrix runs both branches of the HPA flow with every API call
// failing once: wanted (applied) and no longer wanted (the owner's HPA deleted). HPAs
// that are not the owner's are never touched; every run converges.
func TestReconcileHPAFaultMatrix(t *testing.T) {
	for name, wanted := range map[string]bool{"wanted": true, "not wanted": false} {
		t.Run(name, func(t *testing.T) {
			faults.Matrix{
				Setup: func(t *testing.T) faults.Scenario {
					ns := env.Namespace(t)
					owner := newOwner(t, ns, "dashboard")
					key := client.ObjectKey{Namespace: ns, Name: "web"}
					notOurs := foreignObjects(t, ns, func(name string) client.Object {
						h := desiredHPA(4)
						h.Name, h.Namespace = name, ns
						return h
					})
					if !wanted {
						if _, err := deployment.ReconcileHPA(context.Background(), env.Client, env.Scheme, owner, key, desiredHPA(4)); err != nil {
							t.Fatal(err)
						}
					}
					return faults.Scenario{
						Client: env.Client,
						Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
							var desired *autoscalingv2.HorizontalPodAutoscaler
							if wanted {
								desired = desiredHPA(6)
							}
							cond, err := deployment.ReconcileHPA(ctx, c, env.Scheme, owner, key, desired)
							if err == nil && cond.Status != metav1.ConditionTrue {
								t.Errorf("condition %+v without an error", cond)
							}
							return ctrl.Result{}, err
						},
						Check: notOurs,
						State: func(t *testing.T) any { return hpaNames(t, ns) },
					}
				},
			}.Run(t)
		})
	}
}

// TestVPAFlowFaultMatrix: the VPA flow applies the wanted VPA and prunes the
// owner's VPA that is no longer wanted, with every API call failing once; VPAs that
// are not the owner's are never touched and every run converges to the same set.
func TestVPAFlowFaultMatrix(t *testing.T) {
	faults.Matrix{
		Setup: func(t *testing.T) faults.Scenario {
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "dashboard")
			if _, err := vpaFlow(context.Background(), env.Client, env.Scheme, owner,
				[]*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "old")}); err != nil {
				t.Fatal(err)
			}
			notOurs := foreignObjects(t, ns, func(name string) client.Object { return desiredVPA(ns, name) })
			return faults.Scenario{
				Client: env.Client,
				Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
					cond, err := vpaFlow(ctx, c, env.Scheme, owner, []*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "web")})
					if err != nil && cond.Reason != deployment.ReasonVPAError {
						t.Errorf("error %v with condition reason %q, want %q", err, cond.Reason, deployment.ReasonVPAError)
					}
					return ctrl.Result{}, err
				},
				Check: notOurs,
				State: func(t *testing.T) any {
					list := &vpav1.VerticalPodAutoscalerList{}
					if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
						t.Fatal(err)
					}
					var out []string
					for i := range list.Items {
						out = append(out, list.Items[i].Name+"="+controllerName(&list.Items[i]))
					}
					slices.Sort(out)
					return out
				},
			}
		},
	}.Run(t)
}
