package child_test

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// env runs no CRDs: the VerticalPodAutoscaler kind is in its scheme but not served,
// which is what the probe tests need; the children of the other tests are ConfigMaps.
var env *testenv.Env

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	os.Exit(testenv.Main(m, testenv.Options{CRDSources: []testenv.CRDSource{}}, &env))
}
