package httproute_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/testenv"
)

var (
	// env has the upstream CRDs, the Gateway API among them.
	env *testenv.Env
	// bare has no CRDs: a cluster without the Gateway API.
	bare *testenv.Env
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// Starting two control planes takes long enough for controller-runtime to complain
	// that no logger was set; envtest's CRD installer logs through it.
	ctrllog.SetLogger(logr.Discard())
	var err error
	bare, err = testenv.Start(testenv.Options{CRDSources: []testenv.CRDSource{}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: start control plane without CRDs: %v\n", err)
		return 1
	}
	code := testenv.Main(m, testenv.Options{}, &env)
	if err := bare.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: stop control plane without CRDs: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
