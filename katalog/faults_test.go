package katalog

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

const faultKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: faults}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      mutation:
        rules:
          - {field: spec.size, default: 3}
      operatorBox:
        onCreate:
          secrets:
            - name: "{{ .metadata.name }}-credentials"
              once: true
              data: {password: "{{ randomAlphanumeric 16 }}"}
        onReconcile:
          configMaps:
            - name: "{{ .metadata.name }}"
              data: {size: "{{ .spec.size }}"}
        status:
          fields:
            - {path: phase, value: Pending}
            - {path: phase, value: Ready, when: [{field: children.configmap.data.size, equals: "3"}]}
`

// passEngine is an engine whose passes read and write through c only, for fault injection.
func passEngine(c client.Client, k *Katalog) *Engine { return passEngineWith(c, k, testOptions()) }

// passEngineWith is passEngine with the engine options opts (events go to a fake
// recorder unless opts names one).
func passEngineWith(c client.Client, k *Katalog, opts EngineOptions) *Engine {
	if opts.Recorder == nil {
		opts.Recorder = events.NewFakeRecorder(100)
	}
	e := &Engine{
		opts:      opts,
		applier:   apply.NewApplier(c, apply.ApplierOptions{FieldManager: opts.FieldManager}),
		reader:    c,
		apiReader: c,
		scheme:    env.Scheme,
		crds:      map[string]*CRD{},
		health:    map[string]*health{},
		recs:      map[string]*crdReconciler{},
	}
	for name, crd := range k.Spec.CRDs {
		e.crds[name] = crd
		e.health[name] = newHealth(opts.HealthWindow)
		r, err := newCRDReconciler(e, crd)
		if err != nil {
			panic(err)
		}
		e.recs[name] = r
	}
	return e
}

// TestFaultPerVerb fails each API call of the passes in turn: every fault surfaces as an
// error (or a conflict is absorbed), the once Secret is never regenerated, and the run
// converges to the same custom resource status, defaults and children as a run without
// faults.
func TestFaultPerVerb(t *testing.T) {
	k := mustParse(t, "faults.yaml", faultKatalog)
	faults.Matrix{
		MaxPasses: 8,
		Setup: func(t *testing.T) faults.Scenario {
			ns := env.Namespace(t)
			g := newObject("Gadget", ns, "g", map[string]any{})
			create(t, g)
			password := ""
			secretKey := client.ObjectKey{Namespace: ns, Name: "g-credentials"}
			return faults.Scenario{
				Client: env.Client,
				Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
					e := passEngine(c, k)
					res, err := e.recs["gadget"].Reconcile(ctx, reconcileRequest(g))
					if err == nil && res.RequeueAfter == e.crds["gadget"].ResyncPeriod() {
						res = ctrl.Result{} // converged: the resync is the only requeue
					}
					return res, err
				},
				Check: func(t *testing.T) {
					s := &corev1.Secret{}
					if err := env.Client.Get(context.Background(), secretKey, s); err != nil {
						return
					}
					got := string(s.Data["password"])
					if password != "" && got != password {
						t.Errorf("the once Secret was regenerated")
					}
					password = got
				},
				State: func(t *testing.T) any {
					fresh := g.DeepCopy()
					if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(g), fresh); err != nil {
						t.Fatal(err)
					}
					conds, err := readConditions(fresh)
					if err != nil {
						t.Fatal(err)
					}
					var ready []string
					for _, c := range conds {
						ready = append(ready, c.Type+"="+string(c.Status)+"/"+c.Reason)
					}
					size, _, _ := unstructured.NestedInt64(fresh.Object, "spec", "size")
					phase, _, _ := unstructured.NestedString(fresh.Object, "status", "phase")
					cm := &corev1.ConfigMap{}
					if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: fresh.GetNamespace(), Name: "g"}, cm); err != nil {
						t.Fatal(err)
					}
					s := &corev1.Secret{}
					if err := env.Client.Get(context.Background(), secretKey, s); err != nil {
						t.Fatal(err)
					}
					return map[string]any{
						"conditions": ready, "size": size, "phase": phase, "configMap": cm.Data,
						"passwordLength": len(s.Data["password"]),
					}
				},
			}
		},
	}.Run(t)
}

// passOnce runs one pass of the CRD entry crd of e over obj and returns the pass's error,
// obj as the API server has it afterwards and its Ready condition.
func passOnce(t *testing.T, e *Engine, crd string, obj *unstructured.Unstructured) (*unstructured.Unstructured, *metav1.Condition, error) {
	t.Helper()
	ctx := context.Background()
	_, perr := e.recs[crd].Reconcile(ctx, reconcileRequest(obj))
	fresh := obj.DeepCopy()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
		t.Fatal(err)
	}
	c, err := readyCondition(ctx, fresh)
	if err != nil {
		t.Fatalf("%s %s: %v (pass: %v)", obj.GetKind(), obj.GetName(), err, perr)
	}
	return fresh, c, perr
}
