package v1alpha1_test

import (
	"os"
	"testing"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the control plane of the package's tests: kube-apiserver and etcd with only
// the Horizon CRD installed, so admission runs the CRD's real schema, defaults and
// CEL rules.
var env *testenv.Env

func TestMain(m *testing.M) {
	scheme, err := testenv.NewSchemeWith(v1alpha1.AddToScheme)
	if err != nil {
		panic(err)
	}
	os.Exit(testenv.Main(m, testenv.Options{
		Scheme:     scheme,
		CRDSources: []testenv.CRDSource{}, // no upstream CRDs: Horizon embeds none of them
		CRDPaths:   []string{"../../config/crd/bases"},
	}, &env))
}
