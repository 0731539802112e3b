package conformance_test

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the management cluster of the conformance suite: the upstream CRDs (ESO,
// Gateway API, VPA, ...) and the Horizon CRD, with the real controllers, so that
// Deployments roll out and deleted Horizons are collected.
var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	scheme, err := testenv.NewSchemeWith(v1alpha1.AddToScheme)
	if err != nil {
		panic(err)
	}
	os.Exit(testenv.Main(m, testenv.Options{
		Scheme:      scheme,
		CRDPaths:    []string{"../config/crd/bases"},
		Controllers: true,
	}, &env))
}
