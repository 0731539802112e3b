package v1alpha1_test

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is kube-apiserver and etcd with only the Horizon CRD (Horizon embeds no upstream
// kind), so admission runs the CRD's real schema, defaults and CEL rules.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{v1alpha1.AddToScheme},
		CRDSources: []testenv.CRDSource{}, CRDPaths: []string{"../../config/crd/bases"}}, &env))
}
