package testenv_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/testenv"
)

func TestFaultInjectorFailsExactlyTheArmedCall(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	inj := testenv.NewFaultInjector()
	c := inj.Client(env.Client)
	key := client.ObjectKey{Namespace: ns, Name: "cm"}

	inj.Arm(testenv.VerbGet, 2, testenv.FaultInternal)
	for i, wantErr := range []bool{false, true, false} {
		err := c.Get(ctx, key, &corev1.ConfigMap{})
		injected := errors.Is(err, testenv.ErrInjected)
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
	if !inj.Fired() || inj.Calls(testenv.VerbGet) != 3 {
		t.Errorf("fired = %v, Get calls = %d; want true, 3", inj.Fired(), inj.Calls(testenv.VerbGet))
	}

	// A timeout on a write is served first: the caller cannot tell whether it happened.
	inj.Arm(testenv.VerbCreate, 1, testenv.FaultTimeout)
	err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns}})
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, testenv.ErrInjected) {
		t.Errorf("Create: %v, want an injected DeadlineExceeded", err)
	}
	if err := env.Client.Get(ctx, key, &corev1.ConfigMap{}); err != nil {
		t.Errorf("the timed-out Create was not served: %v", err)
	}

	// A cancelled call is not served.
	inj.Arm(testenv.VerbDelete, 1, testenv.FaultCanceled)
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
	if inj.Calls(testenv.VerbUpdate) != 1 || inj.Calls(testenv.VerbGet) != 1 || inj.Fired() {
		t.Errorf("calls after Disarm: Get %d, Update %d, fired %v", inj.Calls(testenv.VerbGet), inj.Calls(testenv.VerbUpdate), inj.Fired())
	}
}
