package bench_test

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

// TestMain shares one control plane, with the BenchApp CRD and no upstream CRDs, across
// the tests, the benchmarks and the report: the three ways are compared on the same
// kube-apiserver and etcd.
func TestMain(m *testing.M) {
	// The managers log through controller-runtime's root logger.
	ctrllog.SetLogger(logr.Discard())
	os.Exit(testenv.Main(m, testenv.Options{
		Scheme:     newScheme(),
		CRDPaths:   []string{"testdata/crds"},
		CRDSources: []testenv.CRDSource{},
	}, &env))
}
