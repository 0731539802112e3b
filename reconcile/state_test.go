package reconcile_test

import (
	"context"
	"fmt"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

type digests struct{ secretKey string }
type names struct{ secretKey string }

func TestState(t *testing.T) {
	d := &digests{}
	ctx := reconcile.WithState(context.Background(), d)
	reconcile.StateFrom[digests](ctx).secretKey = "9bb5edb6"
	if d.secretKey != "9bb5edb6" {
		t.Fatalf("a write through StateFrom did not reach the pass's state: %+v", d)
	}
	// A state of another type, even with the same shape, is another key.
	if got := reconcile.StateFrom[names](ctx); got.secretKey != "" {
		t.Fatalf("StateFrom[names] = %+v, want a fresh zero state", got)
	}
	// Outside a pass every call gets its own fresh state.
	a, b := reconcile.StateFrom[digests](context.Background()), reconcile.StateFrom[digests](context.Background())
	a.secretKey = "x"
	if b.secretKey != "" || a == b {
		t.Fatal("StateFrom without WithState shares a state")
	}
}

// Two steps of one pass hand a value over through the pass state.
func ExampleWithState() {
	type passState struct{ keyHash string }
	secrets := func(ctx context.Context, _ *Widget) (ctrl.Result, error) {
		reconcile.StateFrom[passState](ctx).keyHash = "750c08c0"
		return ctrl.Result{}, nil
	}
	deployment := func(ctx context.Context, _ *Widget) (ctrl.Result, error) {
		fmt.Println("pod annotation:", reconcile.StateFrom[passState](ctx).keyHash)
		return ctrl.Result{}, nil
	}
	p, err := reconcile.NewPipeline(nil,
		reconcile.Step[*Widget]{Name: "Secrets", Run: secrets},
		reconcile.Step[*Widget]{Name: "Deployment", Run: deployment})
	if err != nil {
		panic(err)
	}
	if _, err := p.Run(reconcile.WithState(context.Background(), &passState{}), newWidget(1)); err != nil {
		panic(err)
	}
	// Output: pod annotation: 750c08c0
}
