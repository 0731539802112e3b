package satellite_test

import (
	"os"
	"testing"

	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

// TestMain starts one control plane for the package. The parent kind of the tests is
// the test CRD Widget (it carries spec.targetClusterRef), installed from its manifest
// and read as unstructured; Deployments and Secrets are core types.
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		CRDSources: []testenv.CRDSource{},
		CRDPaths:   []string{"../api/v1/internal/testcrd/crds"},
	}, &env))
}
