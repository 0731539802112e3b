package secrets_test

import (
	"os"
	"testing"

	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{CRDSources: []testenv.CRDSource{{
		Module: testenv.ESOModule, Version: testenv.ESOVersion,
		Files: []string{
			"config/crds/bases/external-secrets.io_externalsecrets.yaml",
			"config/crds/bases/external-secrets.io_secretstores.yaml",
			"config/crds/bases/external-secrets.io_clustersecretstores.yaml",
			"config/crds/bases/external-secrets.io_pushsecrets.yaml",
		},
	}}}, &env))
}
