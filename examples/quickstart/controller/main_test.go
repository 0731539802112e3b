package controller_test

import (
	"os"
	"testing"

	"github.com/c5c3/reconciler-sdk/examples/quickstart/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the control plane of the package's tests: kube-apiserver and etcd with the
// Memo CRD, and the real controllers (garbage collector, Deployments, a scheduler and
// kwok's fake node), so that Deployments roll out and owned children are collected.
var env *testenv.Env

func TestMain(m *testing.M) {
	scheme, err := testenv.NewSchemeWith(v1alpha1.AddToScheme) // the kit's types and the Memo
	if err != nil {
		panic(err)
	}
	os.Exit(testenv.Main(m, testenv.Options{
		Scheme:      scheme,
		CRDPaths:    []string{"../config/crd/bases"},
		Controllers: true,
	}, &env))
}
