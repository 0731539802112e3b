package v1alpha1_test

import (
	"os"
	"testing"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the control plane of the package's tests: kube-apiserver and etcd with only
// the Keystone CRDs installed, so admission runs their real schema, defaults and CEL
// rules.
var env *testenv.Env

func TestMain(m *testing.M) {
	scheme, err := testenv.NewSchemeWith(v1alpha1.AddToScheme)
	if err != nil {
		panic(err)
	}
	os.Exit(testenv.Main(m, testenv.Options{
		Scheme:     scheme,
		CRDSources: []testenv.CRDSource{},
		CRDPaths:   []string{"../../config/crd/bases"},
	}, &env))
}
