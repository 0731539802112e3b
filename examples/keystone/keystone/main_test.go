package keystone_test

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the management cluster of the package's tests: kube-apiserver and etcd with
// the upstream CRDs (ESO, cert-manager, mariadb-operator, Gateway API, ...) and the
// Keystone CRDs, and the real controllers (garbage collector, Deployments, ReplicaSets,
// Jobs, a scheduler and kwok's fake node), so Deployments roll out, Jobs complete and
// deleted Keystones are collected.
var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	scheme, err := testenv.NewSchemeWith(v1alpha1.AddToScheme)
	if err != nil {
		panic(err)
	}
	os.Exit(testenv.Main(m, testenv.Options{
		Scheme:      scheme,
		CRDPaths:    []string{"../config/crd/bases"},
		Controllers: true,
	}, &env))
}
