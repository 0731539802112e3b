package v1_test

import (
	"os"
	"testing"

	testcrdv1 "github.com/c5c3/reconciler-sdk/api/v1/internal/testcrd/v1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

// TestMain starts one control plane for the package with only the test CRD, which
// embeds this package's spec blocks, installed.
func TestMain(m *testing.M) {
	scheme := testenv.NewScheme()
	if err := testcrdv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	os.Exit(testenv.Main(m, testenv.Options{
		Scheme:     scheme,
		CRDSources: []testenv.CRDSource{},
		CRDPaths:   []string{"internal/testcrd/crds"},
	}, &env))
}
