package keystests

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the control plane of the package's tests: kube-apiserver and etcd with the
// upstream CRDs (External Secrets Operator's among them) and the Keystone CRDs. No
// controller runs: the CronJobs are only written, and ESO is simulated by backend.
var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	scheme, err := testenv.NewSchemeWith(v1alpha1.AddToScheme)
	if err != nil {
		panic(err)
	}
	os.Exit(testenv.Main(m, testenv.Options{
		Scheme:   scheme,
		CRDPaths: []string{"../config/crd/bases"},
	}, &env))
}
