package policy_test

import (
	"flag"
	"os"
	"testing"

	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	flag.Parse()
	if fuzzWorker() {
		// A fuzz worker runs only a fuzz target, and this package's are pure. The
		// fuzzing engine starts, stops and restarts workers at will, so a worker that
		// started a control plane would leave etcd and kube-apiserver behind.
		os.Exit(m.Run())
	}
	// The policy package reads ConfigMaps only: no upstream CRDs needed.
	os.Exit(testenv.Main(m, testenv.Options{CRDSources: []testenv.CRDSource{}}, &env))
}

// fuzzWorker reports a process the fuzzing engine started to run inputs (go test
// -fuzz runs the fuzz target in such child processes).
func fuzzWorker() bool {
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}
