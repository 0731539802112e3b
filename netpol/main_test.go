package netpol_test

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	// Quiet controller-runtime's "log.SetLogger(...) was never called" warning on long runs.
	ctrllog.SetLogger(logr.Discard())
	// The flow only touches core kinds: skip the upstream CRDs for a faster start.
	os.Exit(testenv.Main(m, testenv.Options{CRDSources: []testenv.CRDSource{}}, &env))
}
