package conformance_test

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the control plane of the package's tests: kube-apiserver and etcd with the
// Toy CRD (no upstream CRDs) and the real controllers, so that the Deletion check's
// garbage collector runs.
var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	scheme, err := testenv.NewSchemeWith(addToyToScheme)
	if err != nil {
		panic(err)
	}
	os.Exit(testenv.Main(m, testenv.Options{
		Scheme:      scheme,
		CRDSources:  []testenv.CRDSource{},
		CRDPaths:    []string{"testdata/crd"},
		Controllers: true,
	}, &env))
}
