package reconcilersdk_test

import (
	"os"
	"testing"

	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

// TestMain shares one control plane (with the upstream CRDs) across the module-level
// suites.
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{}, &env))
}
