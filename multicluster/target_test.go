package multicluster_test

import (
	"context"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// countingReader reads through env's client and counts the Gets.
type countingReader struct {
	client.Reader
	gets atomic.Int64
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.gets.Add(1)
	return r.Reader.Get(ctx, key, obj, opts...)
}

// A pass run with the management cluster's PassOptions re-reads the CR through the
// target's APIReader when its status write conflicts (here another client labels the
// Gadget during the pass), and aggregates Ready from the conditions it names.
func TestTargetPassOptions(t *testing.T) {
	ns := env.Namespace(t)
	g := &Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: ns}}
	if err := env.Client.Create(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	reader := &countingReader{Reader: env.Client}
	local := &multicluster.Target{Client: env.Client, APIReader: reader}
	opts := local.PassOptions(childrenReady)
	ran := false
	_, err := reconcile.RunPass(context.Background(), env.Client, client.ObjectKeyFromObject(g), &Gadget{}, opts,
		func(ctx context.Context, g *Gadget) (ctrl.Result, error) {
			ran = true
			other := &Gadget{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(g), other); err != nil {
				return ctrl.Result{}, err
			}
			other.Labels = map[string]string{"edited": "meanwhile"}
			if err := env.Client.Update(ctx, other); err != nil {
				return ctrl.Result{}, err
			}
			reconcile.MarkTrue(g, childrenReady, "ChildrenApplied", "")
			return ctrl.Result{}, nil
		})
	if err != nil || !ran {
		t.Fatalf("RunPass = %v, ran %v", err, ran)
	}
	if reader.gets.Load() == 0 {
		t.Error("the conflicting status write did not re-read the Gadget through the target's APIReader")
	}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(g), g); err != nil {
		t.Fatal(err)
	}
	if !reconcile.IsTrue(g, reconcile.ConditionReady) {
		t.Errorf("Ready is not True after the only named condition turned True: %+v", g.Status.Conditions)
	}
}

// TargetOf is the pass's target inside a pass, without touching the resolver, and the
// management cluster outside one.
func TestTargetOf(t *testing.T) {
	edge := &multicluster.Target{Name: "edge"}
	var none *multicluster.ClusterResolver
	if got := none.TargetOf(multicluster.WithTarget(context.Background(), edge)); got != edge {
		t.Errorf("inside a pass on edge: %v, want edge", got)
	}
	resolver, err := multicluster.NewResolver(context.Background(), localManager(t), multicluster.ResolverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := resolver.TargetOf(context.Background()); got != resolver.Local() || !got.IsLocal() {
		t.Errorf("outside a pass: %v, want the management cluster", got)
	}
}
