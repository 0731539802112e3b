package v1alpha1_test

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is kube-apiserver and etcd with only the Keystone CRDs, so admission runs their
// real schema, defaults and CEL rules.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{v1alpha1.AddToScheme},
		CRDSources: []testenv.CRDSource{}, CRDPaths: []string{"../../config/crd/bases"}}, &env))
}
