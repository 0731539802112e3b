package conformance_test

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the conformance suite's management cluster: the upstream CRDs and the Keystone
// CRDs, with the real controllers (Deployments roll out, Jobs complete, Keystones are
// collected).
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{v1alpha1.AddToScheme},
		CRDPaths: []string{"../config/crd/bases"}, Controllers: true}, &env))
}
