package faults_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

func TestFaultInjectorFailsExactlyTheArmedCall(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	inj := faults.NewInjector()
	c := inj.Client(env.Client)
	key := client.ObjectKey{Namespace: ns, Name: "cm"}

	inj.Arm(faults.VerbGet, 2, faults.Internal)
	for i, wantErr := range []bool{false, true, false} {
		err := c.Get(ctx, key, &corev1.ConfigMap{})
		injected := errors.Is(err, faults.ErrInjected)
		if injected != wantErr {
			t.Errorf("Get %d: injected = %v (err %v), want %v", i+1, injected, err, wantErr)
		}
		if wantErr && !apierrors.IsInternalError(err) {
			t.Errorf("Get %d: %v is not a 500", i+1, err)
		}
		if !wantErr && !apierrors.IsNotFound(err) {
			t.Errorf("Get %d: %v, want the server's NotFound", i+1, err)
		}
	}
	if !inj.Fired() || inj.Calls(faults.VerbGet) != 3 {
		t.Errorf("fired = %v, Get calls = %d; want true, 3", inj.Fired(), inj.Calls(faults.VerbGet))
	}

	// A timeout on a write is served first: the caller cannot tell whether it happened.
	inj.Arm(faults.VerbCreate, 1, faults.Timeout)
	err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns}})
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, faults.ErrInjected) {
		t.Errorf("Create: %v, want an injected DeadlineExceeded", err)
	}
	if err := env.Client.Get(ctx, key, &corev1.ConfigMap{}); err != nil {
		t.Errorf("the timed-out Create was not served: %v", err)
	}

	// A cancelled call is not served.
	inj.Arm(faults.VerbDelete, 1, faults.Canceled)
	if err := c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns}}); !errors.Is(err, context.Canceled) {
		t.Errorf("Delete: %v, want context.Canceled", err)
	}
	if err := env.Client.Get(ctx, key, &corev1.ConfigMap{}); err != nil {
		t.Errorf("the cancelled Delete was served: %v", err)
	}

	// Status writes are their own verb; Disarm stops all faults.
	inj.Disarm()
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, key, cm); err != nil {
		t.Fatal(err)
	}
	if err := c.Update(ctx, cm); err != nil {
		t.Errorf("disarmed Update: %v", err)
	}
	if inj.Calls(faults.VerbUpdate) != 1 || inj.Calls(faults.VerbGet) != 1 || inj.Fired() {
		t.Errorf("calls after Disarm: Get %d, Update %d, fired %v", inj.Calls(faults.VerbGet), inj.Calls(faults.VerbUpdate), inj.Fired())
	}
}

// TestFaultMatrixRunWritesAndReads: the writes get every fault, the reads only 500 and
// a cancelled context.
func TestFaultMatrixRunWritesAndReads(t *testing.T) {
	var runs []string
	faults.Matrix{Setup: func(t *testing.T) faults.Scenario {
		runs = append(runs, strings.TrimPrefix(t.Name(), "TestFaultMatrixRunWritesAndReads/"))
		key := client.ObjectKey{Namespace: env.Namespace(t), Name: "cm"}
		return faults.Scenario{
			Client: env.Client,
			Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
				err := c.Get(ctx, key, &corev1.ConfigMap{})
				if apierrors.IsNotFound(err) {
					err = c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}})
				}
				return ctrl.Result{}, err
			},
		}
	}}.RunWritesAndReads(t)
	want := []string{
		"writes/no-fault",
		"writes/Create/conflict/call-1", "writes/Create/internal/call-1",
		"writes/Create/timeout/call-1", "writes/Create/canceled/call-1",
		"reads/no-fault",
		"reads/Get/internal/call-1", "reads/Get/canceled/call-1",
	}
	if diff := cmp.Diff(want, runs); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}
