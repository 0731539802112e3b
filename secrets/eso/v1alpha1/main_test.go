package v1alpha1_test

import (
	"os"
	"testing"

	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

// TestMain starts one control plane for the package with only ESO's PushSecret CRD
// installed.
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{CRDSources: []testenv.CRDSource{{
		Module: testenv.ESOModule, Version: testenv.ESOVersion,
		Files: []string{"config/crds/bases/external-secrets.io_pushsecrets.yaml"},
	}}}, &env))
}
