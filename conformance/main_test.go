package conformance_test

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the control plane of the package's tests: kube-apiserver and etcd with the
// Toy CRD (no upstream CRDs) and the real controllers, so that the Deletion check's
// garbage collector runs.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{addToyToScheme},
		CRDSources: []testenv.CRDSource{}, CRDPaths: []string{"testdata/crd"}, Controllers: true}, &env))
}
