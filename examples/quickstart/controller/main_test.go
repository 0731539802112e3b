package controller_test

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/reconciler-sdk/examples/quickstart/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is kube-apiserver and etcd with the Memo CRD and the real controllers, so that
// Deployments roll out and owned children are collected.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{v1alpha1.AddToScheme},
		CRDPaths: []string{"../config/crd/bases"}, Controllers: true}, &env))
}
