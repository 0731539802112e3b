package policy_test

import (
	"os"
	"testing"

	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

// TestMain shares one control plane across the package; fuzz workers start none
// (testenv.Main), so the pure fuzz targets can run with -fuzz.
func TestMain(m *testing.M) {
	// The policy package reads ConfigMaps only: no upstream CRDs needed.
	os.Exit(testenv.Main(m, testenv.Options{CRDSources: []testenv.CRDSource{}}, &env))
}
