package conformance_test

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the conformance suite's management cluster: the upstream CRDs and the Horizon
// CRD, with the real controllers (Deployments roll out, deleted Horizons are collected).
// The scheme holds the Horizon group (controller.AddToScheme); the Keystone CRDs are not
// installed, so the operator runs without the backend watch.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{controller.AddToScheme},
		CRDPaths: []string{"../config/crd/bases"}, Controllers: true}, &env))
}
