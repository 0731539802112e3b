package multicluster_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// gadgetKind is the Gadget kind as a CRReconciler takes it: Prepare counts the passes
// in prepared and copies into observed the generation the pass recorded (a Gadget has
// no status.observedGeneration, so it goes to a field of the kind's own).
func gadgetKind(observed *atomic.Int64, prepared *atomic.Int32) multicluster.CRKind[*Gadget] {
	var generation int64 // the controller runs one pass at a time
	return multicluster.CRKind[*Gadget]{Name: "crgadget", GateCondition: "ConfigReady",
		New:                func() *Gadget { return &Gadget{} },
		TargetClusterRef:   func(g *Gadget) *commonv1.TargetClusterRefSpec { return g.Spec.TargetClusterRef },
		ObservedGeneration: func(*Gadget) *int64 { return &generation },
		Prepare: func(ctx context.Context, _ *Gadget) context.Context {
			observed.Store(generation)
			prepared.Add(1)
			return ctx
		},
	}
}

// configStep applies the Gadget's ConfigMap on the pass's target cluster.
func configStep(r **multicluster.CRReconciler[*Gadget]) reconcile.Step[*Gadget] {
	return reconcile.Step[*Gadget]{Name: "Config", Condition: "ConfigReady", Owns: []client.Object{&corev1.ConfigMap{}},
		Run: func(ctx context.Context, g *Gadget) (ctrl.Result, error) {
			target := (*r).TargetOf(ctx)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: g.Name + "-config", Namespace: g.Namespace},
				Data: map[string]string{"message": g.Spec.Message}}
			if err := apply.EnsureObject(ctx, target.Client, target.Client.Scheme(), g, cm, apply.FieldManager); err != nil {
				return ctrl.Result{}, err
			}
			reconcile.MarkTrue(g, "ConfigReady", "ConfigApplied", "")
			return ctrl.Result{}, nil
		}}
}

// A CRReconciler on a started manager reconciles a Gadget through its pipeline behind
// the target-cluster preamble: the owned ConfigMap is applied and watched (a deleted
// one comes back), Ready aggregates the step's condition, Wrap sees every pass, and
// Children lists the owned kind.
func TestCRReconciler(t *testing.T) {
	ns := env.Namespace(t)
	mgr, err := multicluster.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"}, Controller: config.Controller{SkipNameValidation: ptr.To(true)}},
		multicluster.ManagerOptions{FieldManager: "gadget-operator"})
	if err != nil {
		t.Fatal(err)
	}
	resolver, err := multicluster.NewResolver(context.Background(), mgr, multicluster.ResolverOptions{
		Applier: apply.ApplierOptions{FieldManager: "gadget-operator"}})
	if err != nil {
		t.Fatal(err)
	}
	var r *multicluster.CRReconciler[*Gadget]
	p, err := reconcile.NewPipeline(nil, configStep(&r))
	if err != nil {
		t.Fatal(err)
	}
	var observed atomic.Int64
	var prepared, wrapped atomic.Int32
	opts := multicluster.ReconcilerOptions[*Gadget]{FieldManager: "gadget-operator",
		Wrap: func(next crreconcile.Reconciler) crreconcile.Reconciler {
			return crreconcile.Func(func(ctx context.Context, req crreconcile.Request) (ctrl.Result, error) {
				wrapped.Add(1)
				return next.Reconcile(ctx, req)
			})
		}}
	if r, err = multicluster.NewCRReconciler(resolver, p, gadgetKind(&observed, &prepared), opts); err != nil {
		t.Fatal(err)
	}
	if lists := r.Children(); len(lists) != 1 {
		t.Fatalf("Children = %v, want the ConfigMap list", lists)
	} else if _, ok := lists[0].(*corev1.ConfigMapList); !ok {
		t.Fatalf("Children = %T, want *corev1.ConfigMapList", lists[0])
	}
	b, err := r.NewController(context.Background(), mgr)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Complete(b); err != nil {
		t.Fatal(err)
	}
	ctx := testenv.Go(t, mgr.Start)

	g := &Gadget{ObjectMeta: metav1.ObjectMeta{Name: "cr", Namespace: ns}, Spec: GadgetSpec{Message: "hello"}}
	if err := env.Client.Create(ctx, g); err != nil {
		t.Fatal(err)
	}
	cmKey := client.ObjectKey{Namespace: ns, Name: "cr-config"}
	testenv.Eventually(t, 30*time.Second, "the Gadget's ConfigMap and Ready", func(ctx context.Context) (bool, error) {
		got := &Gadget{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(g), got); err != nil {
			return false, err
		}
		ready := false
		for _, c := range got.Status.Conditions {
			ready = ready || c.Type == reconcile.ConditionReady && c.Status == metav1.ConditionTrue
		}
		return ready && env.Client.Get(ctx, cmKey, &corev1.ConfigMap{}) == nil, nil
	})
	if err := env.Client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cmKey.Name, Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the deleted ConfigMap re-applied", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, cmKey, &corev1.ConfigMap{})
		return err == nil, client.IgnoreNotFound(err)
	})
	if wrapped.Load() == 0 || prepared.Load() < wrapped.Load() || observed.Load() != 1 {
		t.Errorf("wrapped %d, prepared %d, observed generation %d: want every wrapped pass prepared at generation 1",
			wrapped.Load(), prepared.Load(), observed.Load())
	}
}

// NewCRReconciler and ReconcilerOptions.Default refuse what they cannot run with, and
// Default fills the health check's Prober and ProbeURL.
func TestCRReconcilerOptions(t *testing.T) {
	var observed atomic.Int64
	var prepared atomic.Int32
	kind := gadgetKind(&observed, &prepared)
	p, err := reconcile.NewPipeline[*Gadget](nil)
	if err != nil {
		t.Fatal(err)
	}
	noNew := kind
	noNew.New = nil
	for name, build := range map[string]func() error{
		"nil resolver": func() error {
			_, err := multicluster.NewCRReconciler(nil, p, kind, multicluster.ReconcilerOptions[*Gadget]{})
			return err
		},
		"kind without New": func() error {
			_, err := multicluster.NewCRReconciler(&multicluster.ClusterResolver{}, p, noNew, multicluster.ReconcilerOptions[*Gadget]{})
			return err
		},
		"empty FieldManager": func() error {
			o := multicluster.ReconcilerOptions[*Gadget]{}
			return o.Default(multicluster.HealthCheck[*Gadget]{})
		},
		"no endpoint and no ProbeURL": func() error {
			o := multicluster.ReconcilerOptions[*Gadget]{FieldManager: "f"}
			return o.Default(multicluster.HealthCheck[*Gadget]{Path: "/v3"})
		},
		"ProbeBase with user info": func() error {
			o := multicluster.ReconcilerOptions[*Gadget]{FieldManager: "f", ProbeBase: "http://u:p@127.0.0.1"}
			return o.Default(multicluster.HealthCheck[*Gadget]{Path: "/v3", Endpoint: func(*Gadget) string { return "" }})
		},
	} {
		if err := build(); !errors.Is(err, multicluster.ErrInvalidOptions) {
			t.Errorf("%s: err = %v, want ErrInvalidOptions", name, err)
		}
	}

	endpoint := func(g *Gadget) string { return g.Spec.Message }
	validate := func(int, http.Header, []byte) error { return nil }
	for _, tc := range []struct {
		name, base, endpoint, want string
	}{
		{"endpoint", "", "http://gadget.ns.svc:5000", "http://gadget.ns.svc:5000/v3"},
		{"no endpoint yet", "", "", ""},
		{"stand-in", "http://127.0.0.1:1234", "http://gadget.ns.svc:5000", "http://127.0.0.1:1234/v3"},
		{"stand-in before the endpoint", "http://127.0.0.1:1234", "", ""},
		{"proxy path with a trailing slash", "https://proxy.example/gadget/", "http://gadget.ns.svc:5000", "https://proxy.example/gadget/v3"},
	} {
		o := multicluster.ReconcilerOptions[*Gadget]{FieldManager: "f", ProbeBase: tc.base}
		if err := o.Default(multicluster.HealthCheck[*Gadget]{Path: "/v3", Endpoint: endpoint, Validate: validate}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if o.Prober == nil {
			t.Errorf("%s: no default Prober", tc.name)
		}
		if got := o.ProbeURL(&Gadget{Spec: GadgetSpec{Message: tc.endpoint}}); got != tc.want {
			t.Errorf("%s: ProbeURL = %q, want %q", tc.name, got, tc.want)
		}
	}
}
