package controller_test

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the management cluster: the upstream CRDs, the Horizon CRD and the real
// controllers (garbage collector, Deployments, ReplicaSets, scheduler, kwok's node).
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{v1alpha1.AddToScheme},
		CRDPaths: []string{"../config/crd/bases"}, Controllers: true}, &env))
}
