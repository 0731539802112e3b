package apply_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// existingChild creates the ConfigMap "child" in ns as someone else would: with data the
// owner does not want, shaped by mutate.
func existingChild(t *testing.T, ns string, mutate func(*corev1.ConfigMap)) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns},
		Data:       map[string]string{"key": "theirs"},
	}
	if mutate != nil {
		mutate(cm)
	}
	if err := env.Client.Create(context.Background(), cm); err != nil {
		t.Fatalf("create existing child: %v", err)
	}
	return cm
}

func TestEnsureObjectNeverTakesWhatIsNotOurs(t *testing.T) {
	cases := map[string]struct {
		reason string
		// existing makes the object that is there before EnsureObject runs.
		existing func(t *testing.T, ns string) *corev1.ConfigMap
		want     error
		wantMsg  []string
	}{
		"unowned": {
			reason:   "an object made by kubectl or Helm has no controller and is not adopted silently",
			existing: func(t *testing.T, ns string) *corev1.ConfigMap { return existingChild(t, ns, nil) },
			want:     apply.ErrNotControlled,
			wantMsg:  []string{"ConfigMap " + "NS/child", "has no controller", apply.AdoptAnnotation + "=true"},
		},
		"owned but not controlled": {
			reason: "a plain owner reference does not make the owner its controller",
			existing: func(t *testing.T, ns string) *corev1.ConfigMap {
				other := newNamedOwner(t, ns, "other")
				return existingChild(t, ns, func(cm *corev1.ConfigMap) {
					if err := controllerutil.SetOwnerReference(other, cm, env.Scheme); err != nil {
						t.Fatal(err)
					}
				})
			},
			want:    apply.ErrNotControlled,
			wantMsg: []string{"has no controller"},
		},
		"controlled by someone else": {
			reason: "another controller's object is refused, and the error names that controller",
			existing: func(t *testing.T, ns string) *corev1.ConfigMap {
				other := newNamedOwner(t, ns, "helm-release")
				return existingChild(t, ns, func(cm *corev1.ConfigMap) {
					if err := controllerutil.SetControllerReference(other, cm, env.Scheme); err != nil {
						t.Fatal(err)
					}
				})
			},
			want:    apply.ErrNotControlled,
			wantMsg: []string{"controlled by ConfigMap helm-release"},
		},
		"controlled by someone else, with the adopt annotation": {
			reason: "the annotation never hands over an object that has a controller",
			existing: func(t *testing.T, ns string) *corev1.ConfigMap {
				other := newNamedOwner(t, ns, "helm-release")
				return existingChild(t, ns, func(cm *corev1.ConfigMap) {
					cm.Annotations = map[string]string{apply.AdoptAnnotation: "true"}
					if err := controllerutil.SetControllerReference(other, cm, env.Scheme); err != nil {
						t.Fatal(err)
					}
				})
			},
			want:    apply.ErrNotControlled,
			wantMsg: []string{"controlled by ConfigMap helm-release"},
		},
		"unowned, adopt annotation not true": {
			reason: "only the value true is consent",
			existing: func(t *testing.T, ns string) *corev1.ConfigMap {
				return existingChild(t, ns, func(cm *corev1.ConfigMap) {
					cm.Annotations = map[string]string{apply.AdoptAnnotation: "yes"}
				})
			},
			want: apply.ErrNotControlled,
		},
		"being deleted": {
			reason: "an apply to an object on its way out is lost with it",
			existing: func(t *testing.T, ns string) *corev1.ConfigMap {
				return beingDeleted(t, ns, true)
			},
			want: apply.ErrBeingDeleted,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			before := tc.existing(t, ns)
			c, counter, err := env.CountingClient()
			if err != nil {
				t.Fatal(err)
			}

			err = apply.EnsureObject(ctx, c, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager)
			if !errors.Is(err, tc.want) {
				t.Fatalf("%s: error = %v, want errors.Is %v", tc.reason, err, tc.want)
			}
			for _, m := range tc.wantMsg {
				if m = strings.ReplaceAll(m, "NS", ns); !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not say %q", err, m)
				}
			}
			if errors.Is(tc.want, apply.ErrNotControlled) {
				var nce *apply.NotControlledError
				if !errors.As(err, &nce) || nce.Owner != "ConfigMap "+ns+"/owner" {
					t.Errorf("error %v is not a *NotControlledError naming the owner", err)
				}
			}
			if w := counter.Writes(); w != 0 {
				t.Errorf("a refused apply sent %d writes", w)
			}
			after := &corev1.ConfigMap{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(before), after); err != nil {
				t.Fatalf("existing object lost: %v", err)
			}
			if after.ResourceVersion != before.ResourceVersion || after.Data["key"] != "theirs" {
				t.Errorf("existing object was changed: rv %s -> %s, data %v", before.ResourceVersion, after.ResourceVersion, after.Data)
			}
			if errors.Is(tc.want, apply.ErrNotControlled) && metav1.IsControlledBy(after, owner) {
				t.Error("the owner became the controller of an object it was refused")
			}
		})
	}
}

func TestEnsureObjectAdoptsOnConsent(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	existingChild(t, ns, func(cm *corev1.ConfigMap) {
		cm.Annotations = map[string]string{apply.AdoptAnnotation: "true"}
	})

	got := desiredConfigMap(ns)
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, got, apply.FieldManager); err != nil {
		t.Fatalf("annotated unowned object not adopted: %v", err)
	}
	if !metav1.IsControlledBy(got, owner) || got.Data["key"] != "value" {
		t.Errorf("adopted object = controller %v, data %v; want the owner as controller and the desired data",
			metav1.GetControllerOf(got), got.Data)
	}
	// Once adopted, the object is the owner's: the next apply needs no consent.
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
		t.Errorf("apply after adoption: %v", err)
	}
}

func TestEnsureObjectUnstructuredRefusesUnowned(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	existingChild(t, ns, nil)

	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	u.SetName("child")
	u.SetNamespace(ns)
	if err := unstructured.SetNestedStringMap(u.Object, map[string]string{"key": "value"}, "data"); err != nil {
		t.Fatal(err)
	}
	err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, u, apply.FieldManager)
	if !errors.Is(err, apply.ErrNotControlled) {
		t.Fatalf("error = %v, want ErrNotControlled", err)
	}
}

func TestCheckControlled(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	mine := desiredConfigMap(ns)
	if err := controllerutil.SetControllerReference(owner, mine, env.Scheme); err != nil {
		t.Fatal(err)
	}
	if err := apply.CheckControlled(env.Client, owner, mine, gvk); err != nil {
		t.Errorf("controlled object refused: %v", err)
	}
	err := apply.CheckControlled(env.Client, owner, desiredConfigMap(ns), gvk)
	var nce *apply.NotControlledError
	if !errors.As(err, &nce) || nce.Controller != nil || nce.Object != "ConfigMap "+ns+"/child" {
		t.Errorf("unowned object: error = %#v", err)
	}
}

// newNamedOwner creates a persisted ConfigMap that acts as some other controller.
func newNamedOwner(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	o := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if err := env.Client.Create(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return o
}

// beingDeleted creates the "child" ConfigMap held by a finalizer and starts its deletion,
// controlled by the owner "owner" in ns when controlled is true.
func beingDeleted(t *testing.T, ns string, controlled bool) *corev1.ConfigMap {
	t.Helper()
	owner := &corev1.ConfigMap{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "owner"}, owner); err != nil {
		t.Fatal(err)
	}
	cm := existingChild(t, ns, func(cm *corev1.ConfigMap) {
		cm.Finalizers = []string{testenv.HoldFinalizer}
		if controlled {
			if err := controllerutil.SetControllerReference(owner, cm, env.Scheme); err != nil {
				t.Fatal(err)
			}
		}
	})
	env.DeleteHeld(t, cm)
	return cm
}

// TestEnsureObjectFaultMatrix fails each API call of EnsureObject in turn (first apply
// and converged re-apply) with each fault: the call reports it, nothing the owner does
// not want is left behind, and the next fault-free call converges.
func TestEnsureObjectFaultMatrix(t *testing.T) {
	faults.Matrix{
		Setup: func(t *testing.T) faults.Scenario {
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			applied := false
			return faults.Scenario{
				Client: env.Client,
				Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
					if err := apply.EnsureObject(ctx, c, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
						return ctrl.Result{}, err
					}
					if !applied {
						// A second, converged apply belongs to the scenario.
						applied = true
						return ctrl.Result{RequeueAfter: time.Millisecond}, nil
					}
					return ctrl.Result{}, nil
				},
				State: func(t *testing.T) any { return childState(t, ns, owner, nil) },
			}
		},
	}.Run(t)
}

// childState is a fault matrix's State of the ConfigMap "child" of ns: "missing", or its
// data and whether owner controls it, with the entries of more(cm) when more is set.
func childState(t *testing.T, ns string, owner client.Object, more func(*corev1.ConfigMap) map[string]any) any {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "child"}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return "missing"
		}
		t.Fatal(err)
	}
	state := map[string]any{"data": cm.Data, "controlled": metav1.IsControlledBy(cm, owner)}
	if more != nil {
		maps.Copy(state, more(cm))
	}
	return state
}

// TestDeleteControlledLeavesOthersAlone covers DeleteControlled on an object controlled
// by someone else and on one being deleted, and fails each of its calls in turn: someone
// else's object is never deleted, whatever fails.
func TestDeleteControlledLeavesOthersAlone(t *testing.T) {
	ctx := context.Background()
	key := func(ns string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: "child"} }

	t.Run("controlled by someone else", func(t *testing.T) {
		ns := env.Namespace(t)
		owner := newOwner(t, ns)
		other := newNamedOwner(t, ns, "helm-release")
		theirs := existingChild(t, ns, func(cm *corev1.ConfigMap) {
			if err := controllerutil.SetControllerReference(other, cm, env.Scheme); err != nil {
				t.Fatal(err)
			}
		})
		foreign, err := apply.DeleteControlled(ctx, env.Client, owner, &corev1.ConfigMap{}, key(ns))
		if err != nil || !foreign {
			t.Fatalf("foreign=%v err=%v, want true, nil", foreign, err)
		}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(theirs), &corev1.ConfigMap{}); err != nil {
			t.Fatalf("someone else's object was deleted: %v", err)
		}
	})

	t.Run("being deleted", func(t *testing.T) {
		ns := env.Namespace(t)
		owner := newOwner(t, ns)
		beingDeleted(t, ns, true)
		c, counter, err := env.CountingClient()
		if err != nil {
			t.Fatal(err)
		}
		if foreign, err := apply.DeleteControlled(ctx, c, owner, &corev1.ConfigMap{}, key(ns)); err != nil || foreign {
			t.Fatalf("foreign=%v err=%v, want false, nil", foreign, err)
		}
		if w := counter.Writes(); w != 0 {
			t.Errorf("an object already being deleted got %d more writes", w)
		}
	})

	t.Run("fault matrix", func(t *testing.T) {
		faults.Matrix{
			Setup: func(t *testing.T) faults.Scenario {
				ns := env.Namespace(t)
				owner := newOwner(t, ns)
				if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
					t.Fatal(err)
				}
				theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: ns}}
				if err := env.Client.Create(ctx, theirs); err != nil {
					t.Fatal(err)
				}
				return faults.Scenario{
					Client: env.Client,
					Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
						for _, name := range []string{"child", "theirs"} {
							if _, err := apply.DeleteControlled(ctx, c, owner, &corev1.ConfigMap{}, client.ObjectKey{Namespace: ns, Name: name}); err != nil {
								return ctrl.Result{}, err
							}
						}
						return ctrl.Result{}, nil
					},
					Check: func(t *testing.T) {
						if err := env.Client.Get(ctx, client.ObjectKeyFromObject(theirs), &corev1.ConfigMap{}); err != nil {
							t.Fatalf("someone else's object: %v", err)
						}
					},
					State: func(t *testing.T) any {
						err := env.Client.Get(ctx, key(ns), &corev1.ConfigMap{})
						return apierrors.IsNotFound(err)
					},
				}
			},
		}.Run(t)
	})
}
