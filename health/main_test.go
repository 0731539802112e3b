package health_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: a probe, a
// redirect or a cancelled request must not leave one behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
