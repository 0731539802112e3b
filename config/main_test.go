package config_test

import (
	"os"
	"testing"

	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

// TestMain shares one control plane across the package; fuzz workers start none
// (testenv.Main), so the pure fuzz targets can run with -fuzz.
func TestMain(m *testing.M) {
	// The package needs core kinds only: skip the upstream CRDs for a faster start.
	os.Exit(testenv.Main(m, testenv.Options{CRDSources: []testenv.CRDSource{}}, &env))
}
