package controllers_test

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// waitTimeout bounds every wait for a controller to act. The controllers react within
// a few seconds; the margin is for a loaded CI machine.
const waitTimeout = 90 * time.Second

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		CRDSources:  []testenv.CRDSource{}, // the proofs need no upstream CRDs
		Controllers: true,
	}, &env))
}

// eventually polls cond every 250ms until it returns true, failing the test after
// waitTimeout with what and the last state cond described.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (done bool, state string, err error)) {
	t.Helper()
	var state string
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, waitTimeout, true,
		func(ctx context.Context) (bool, error) {
			done, s, err := cond(ctx)
			state, last = s, err
			return done && err == nil, nil
		})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s; last state: %s; last error: %v", waitTimeout, what, state, last)
	}
}
