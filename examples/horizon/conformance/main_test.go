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
// The scheme holds the Keystone API group the operator needs (controller.AddToScheme),
// but its CRDs are not installed: the operator runs without the backend watch.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{controller.AddToScheme},
		CRDPaths: []string{"../config/crd/bases"}, Controllers: true}, &env))
}
