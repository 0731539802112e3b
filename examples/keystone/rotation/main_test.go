package rotation_test

import (
	"os"
	"testing"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the cluster the rotation commands write to: kube-apiserver and etcd, no
// controller; the commands read and write Secrets only.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{CRDSources: []testenv.CRDSource{}}, &env))
}
