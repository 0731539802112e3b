package keystests

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is kube-apiserver and etcd with the upstream CRDs and the Keystone CRDs; no
// controller runs: the CronJobs are only written, and ESO is simulated.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{v1alpha1.AddToScheme},
		CRDPaths: []string{"../config/crd/bases"}}, &env))
}
