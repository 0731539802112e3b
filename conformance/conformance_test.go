package conformance_test

import (
	"testing"

	"github.com/c5c3/reconciler-sdk/conformance"
)

// The toy operator keeps every promise: every check passes.
func TestConformance(t *testing.T) {
	conformance.Run(t, toyOptions(""))
}
