package operator_test

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the control plane every test of the package shares.
var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard()) // the managers the tests start log through the root logger
	os.Exit(testenv.Main(m, testenv.Options{CRDSources: []testenv.CRDSource{}}, &env))
}
