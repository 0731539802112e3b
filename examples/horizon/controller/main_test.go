package controller_test

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the management cluster: the upstream CRDs, the Horizon CRD, the Keystone
// operator's CRDs loaded from their files (the KeystoneIdentityBackends
// spec.websso.identityBackends names, which the tests write as unstructured objects; no
// Keystone controller runs) and the real controllers (garbage collector, Deployments,
// ReplicaSets, scheduler, kwok's node). The scheme holds the Horizon group only.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{controller.AddToScheme},
		CRDPaths: []string{"../config/crd/bases", "../../keystone/config/crd/bases"}, Controllers: true}, &env))
}
