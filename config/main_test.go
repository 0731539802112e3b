package config_test

import (
	"flag"
	"os"
	"testing"

	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	flag.Parse()
	// A fuzzing worker process runs only the (pure) fuzz target: it needs no control
	// plane, and one per worker would only slow fuzzing down.
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		os.Exit(m.Run())
	}
	// The package needs core kinds only: skip the upstream CRDs for a faster start.
	os.Exit(testenv.Main(m, testenv.Options{CRDSources: []testenv.CRDSource{}}, &env))
}
