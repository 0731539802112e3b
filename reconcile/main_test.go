package reconcile_test

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	// The managers some tests start log through controller-runtime's root logger.
	ctrl.SetLogger(logr.Discard())
	os.Exit(testenv.Main(m, testenv.Options{
		Scheme:     newScheme(),
		CRDPaths:   []string{"testdata/crds"},
		CRDSources: []testenv.CRDSource{},
	}, &env))
}
