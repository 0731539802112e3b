package katalog

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr/funcr"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

const statusMergeKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: statusmerge}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      operatorBox:
        status:
          fields:
            - {path: phase, value: Running}
            - {path: size, value: "{{ .spec.size }}"}
`

// laggingCache serves, for the custom resource at key, the copy old stored before the
// later writes, as an informer that has not seen them yet does; every other read goes
// to the Reader it wraps.
type laggingCache struct {
	client.Reader
	key    client.ObjectKey
	old    *unstructured.Unstructured
	served atomic.Int32
}

// Get returns old for the lagging custom resource, the wrapped Reader's object otherwise.
func (c *laggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if u, ok := obj.(*unstructured.Unstructured); ok && key == c.key {
		c.old.DeepCopyInto(u)
		c.served.Add(1)
		return nil
	}
	return c.Reader.Get(ctx, key, obj, opts...)
}

// statusCondition is a condition of generation 1 as the tests store and expect it.
func statusCondition(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: 1,
		LastTransitionTime: metav1.Unix(1700000000, 0)}
}

// setStatusCondition sets c in the unstructured status st, replacing the condition of
// its type.
func setStatusCondition(t *testing.T, st map[string]any, c metav1.Condition) {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := st["conditions"].([]any)
	for i, item := range list {
		if item.(map[string]any)["type"] == c.Type {
			list[i] = m
			st["conditions"] = list
			return
		}
	}
	st["conditions"] = append(list, m)
}

// TestStatusConflictMergesThreeWays: a Katalog pass reads its custom resource from a
// cache that lags behind a newer write, so its status write conflicts and the retry
// merges three ways. A change of the pass (Ready, a status field) is written only where
// the stored custom resource still holds what the pass read; where another writer
// changed it since, the stored value stays, the kept change is logged at V(1) and the
// pass requeues after reconcile.StaleStatusRequeue without an error. A condition the
// pass did not change keeps the stored value, whatever the pass read.
func TestStatusConflictMergesThreeWays(t *testing.T) {
	k := mustParse(t, "statusmerge.yaml", statusMergeKatalog)
	resync := k.Spec.CRDs["gadget"].ResyncPeriod()
	stale := ctrl.Result{RequeueAfter: reconcile.StaleStatusRequeue}
	readyPending := statusCondition("Ready", "False", "Pending", "not reconciled yet")
	readyTrue := statusCondition("Ready", "True", ReasonReconciled, "every declared object is in place")
	readyDegraded := statusCondition("Ready", "False", "Degraded", "set by another writer")
	externalOld := statusCondition("External", "False", "Old", "as the pass read it")
	externalNewer := statusCondition("External", "True", "Newer", "set by another writer")

	for name, tc := range map[string]struct {
		newer func(t *testing.T, st map[string]any) // another writer's status change after the pass's read; nil: none
		spec  bool                                  // the newer write also changes the spec (a new generation)

		want      []metav1.Condition
		wantPhase string
		wantSize  string
		wantRes   ctrl.Result
		wantKept  []string // the changes logged as kept back
		wantWrite bool     // the pass's status write after the conflict went through
	}{
		"another writer's field and condition stay; the pass's other changes are written": {
			newer: func(t *testing.T, st map[string]any) {
				st["phase"] = "Failed"
				setStatusCondition(t, st, externalNewer)
			},
			want:      []metav1.Condition{readyTrue, externalNewer},
			wantPhase: "Failed",
			wantSize:  "3",
			wantRes:   stale,
			wantKept:  []string{"field status.phase"},
			wantWrite: true,
		},
		"a Ready another writer changed since stays": {
			newer: func(t *testing.T, st map[string]any) {
				setStatusCondition(t, st, readyDegraded)
			},
			want:      []metav1.Condition{readyDegraded, externalOld},
			wantPhase: "Running",
			wantSize:  "3",
			wantRes:   stale,
			wantKept:  []string{"condition Ready"},
			wantWrite: true,
		},
		"every change still as the pass read it is written": {
			want:      []metav1.Condition{readyTrue, externalOld},
			wantPhase: "Running",
			wantSize:  "3",
			wantRes:   ctrl.Result{RequeueAfter: resync},
			wantWrite: true,
		},
		"a change equal to the newer value is no conflict": {
			newer: func(t *testing.T, st map[string]any) {
				st["phase"] = "Running"
				st["size"] = "3"
				setStatusCondition(t, st, readyTrue)
			},
			want:      []metav1.Condition{readyTrue, externalOld},
			wantPhase: "Running",
			wantSize:  "3",
			wantRes:   ctrl.Result{RequeueAfter: resync},
		},
		"a newer generation's status is not written": {
			newer: func(t *testing.T, st map[string]any) {
				st["phase"] = "Failed"
			},
			spec:      true,
			want:      []metav1.Condition{readyPending, externalOld},
			wantPhase: "Failed",
			wantSize:  "1",
			wantRes:   ctrl.Result{RequeueAfter: resync},
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			g := newObject("Gadget", env.Namespace(t), "g", map[string]any{"size": int64(3)})
			create(t, g)
			key := client.ObjectKeyFromObject(g)
			get := func() *unstructured.Unstructured {
				t.Helper()
				u := newObject("Gadget", key.Namespace, key.Name, nil)
				if err := env.Client.Get(ctx, key, u); err != nil {
					t.Fatal(err)
				}
				return u
			}

			read := get()
			st := map[string]any{"phase": "Pending", "size": "1"}
			setStatusCondition(t, st, readyPending)
			setStatusCondition(t, st, externalOld)
			read.Object["status"] = st
			if err := env.Client.Status().Update(ctx, read); err != nil {
				t.Fatalf("store the status the pass reads: %v", err)
			}
			old := get()

			w := get()
			if tc.newer != nil {
				st, _ := w.Object["status"].(map[string]any)
				tc.newer(t, st)
				if err := env.Client.Status().Update(ctx, w); err != nil {
					t.Fatalf("the newer status write: %v", err)
				}
				w = get()
			}
			w.SetLabels(map[string]string{"touched": "yes"}) // moves the resourceVersion in any case
			if tc.spec {
				if err := unstructured.SetNestedField(w.Object, int64(4), "spec", "size"); err != nil {
					t.Fatal(err)
				}
			}
			if err := env.Client.Update(ctx, w); err != nil {
				t.Fatalf("the newer write: %v", err)
			}
			stored := get()
			if stored.GetResourceVersion() == old.GetResourceVersion() {
				t.Fatal("the newer write did not move the resourceVersion")
			}

			ww, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
			if err != nil {
				t.Fatal(err)
			}
			var statusWrites atomic.Int32
			c := interceptor.NewClient(ww, interceptor.Funcs{
				SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					statusWrites.Add(1)
					return c.SubResource(sub).Update(ctx, obj, opts...)
				},
			})
			e := passEngine(c, k)
			lag := &laggingCache{Reader: c, key: key, old: old}
			e.reader = lag

			var logged strings.Builder
			logger := funcr.New(func(prefix, args string) { logged.WriteString(prefix + " " + args + "\n") }, funcr.Options{Verbosity: 1})
			res, err := e.recs["gadget"].Reconcile(log.IntoContext(ctx, logger), reconcileRequest(g))
			if lag.served.Load() == 0 {
				t.Fatal("the pass did not read the lagging copy")
			}
			if err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			if res != tc.wantRes {
				t.Errorf("Reconcile result = %+v, want %+v", res, tc.wantRes)
			}
			if statusWrites.Load() == 0 {
				t.Error("the pass wrote no status: its change from the lagging copy never conflicted")
			}

			got := get()
			conds, err := readConditions(got)
			if err != nil {
				t.Fatal(err)
			}
			if len(conds) != len(tc.want) {
				t.Errorf("stored conditions %+v, want %d: %+v", conds, len(tc.want), tc.want)
			}
			for _, want := range tc.want {
				c := apimeta.FindStatusCondition(conds, want.Type)
				if c == nil || c.Status != want.Status || c.Reason != want.Reason || c.Message != want.Message ||
					c.ObservedGeneration != want.ObservedGeneration {
					t.Errorf("stored condition %s = %+v, want %s/%s %q at generation %d",
						want.Type, c, want.Status, want.Reason, want.Message, want.ObservedGeneration)
				}
			}
			phase, _, _ := unstructured.NestedString(got.Object, "status", "phase")
			size, _, _ := unstructured.NestedString(got.Object, "status", "size")
			if phase != tc.wantPhase || size != tc.wantSize {
				t.Errorf("stored status.phase %q, status.size %q; want %q, %q", phase, size, tc.wantPhase, tc.wantSize)
			}
			if wrote := got.GetResourceVersion() != stored.GetResourceVersion(); wrote != tc.wantWrite {
				t.Errorf("status written after the conflict: %v, want %v", wrote, tc.wantWrite)
			}

			out := logged.String()
			if n := strings.Count(out, "another writer changed it"); n != len(tc.wantKept) {
				t.Errorf("%d changes logged as kept back, want %d (%v); log:\n%s", n, len(tc.wantKept), tc.wantKept, out)
			}
			for _, what := range tc.wantKept {
				if !strings.Contains(out, `"change"="`+what+`"`) {
					t.Errorf("the log does not name the kept change %q; log:\n%s", what, out)
				}
			}
		})
	}
}
