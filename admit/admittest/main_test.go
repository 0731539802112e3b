package admittest_test

import (
	"os"
	"testing"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the control plane of the tests that create objects: kube-apiserver and etcd
// with the built-in kinds only, and the webhook configurations of testdata/webhook for
// the ConfigMaps labelled admittest.c5c3.io/webhook=true.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		CRDSources:   []testenv.CRDSource{},
		WebhookPaths: []string{"testdata/webhook"},
	}, &env))
}
