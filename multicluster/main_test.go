package multicluster_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the management cluster; target is the target cluster the tests register on
// it (a second kube-apiserver and etcd).
var env, target *testenv.Env

func TestMain(m *testing.M) {
	// The managers the tests start log through controller-runtime's root logger.
	ctrl.SetLogger(logr.Discard())
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if target, err = testenv.Start(testenv.Options{Scheme: newScheme(), CRDSources: []testenv.CRDSource{}}); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: target cluster: %v\n", err)
		return 1
	}
	code := testenv.Main(m, testenv.Options{
		Scheme:     newScheme(),
		CRDPaths:   []string{"testdata/crds"},
		CRDSources: []testenv.CRDSource{},
	}, &env)
	if err := target.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "target cluster: stop: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
