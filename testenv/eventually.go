package testenv

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// EventuallyInterval is how often [Eventually] asks its condition.
const EventuallyInterval = 100 * time.Millisecond

// Eventually asks cond every [EventuallyInterval], at once first, until it returns
// true, and fails the test naming what when it does not within timeout; the message
// carries cond's last error (an error does not end the wait).
func Eventually(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), EventuallyInterval, timeout, true,
		func(ctx context.Context) (bool, error) {
			ok, err := cond(ctx)
			last = err
			return ok, nil
		})
	if err != nil {
		t.Fatalf("%s: not within %s (last error: %v)", what, timeout, last)
	}
}
