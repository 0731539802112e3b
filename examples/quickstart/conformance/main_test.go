package conformance_test

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/reconciler-sdk/examples/quickstart/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the conformance suite's control plane: the Memo CRD (no upstream CRDs) and the
// real controllers, so Deployments roll out and deleted Memos are collected.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{v1alpha1.AddToScheme},
		CRDSources: []testenv.CRDSource{}, CRDPaths: []string{"../config/crd/bases"}, Controllers: true}, &env))
}
